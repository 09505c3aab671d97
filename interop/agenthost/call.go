package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "trpcbridge/interop/agenthost/trpcbridgev1"
)

var lineJSON = protojson.MarshalOptions{UseProtoNames: true}

func cmdCall(args []string) error {
	fs := flag.NewFlagSet("call", flag.ExitOnError)
	target := fs.String("target", "", "the AgentHost's HOST:PORT")
	message := fs.String("message", "hello", "the user's text")
	user := fs.String("user", "", "caller identity, sent as x-user-id metadata")
	contextID := fs.String("context", "", "context (session) id")
	cancelAfter := fs.Int("cancel-after", 0, "cancel the run after this many events (0: never)")
	describe := fs.Bool("describe", false, "print the AgentInfo first")
	_ = fs.Parse(args)
	conn, err := grpc.NewClient(*target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	client := pb.NewAgentHostClient(conn)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if *user != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "x-user-id", *user)
	}
	if *describe {
		info, err := client.Describe(ctx, &pb.DescribeRequest{})
		if err != nil {
			return failed(err)
		}
		printLine(info)
	}
	stream, err := client.Run(ctx, &pb.AgentRequest{Text: *message, ContextId: *contextID})
	if err != nil {
		return failed(err)
	}
	for count := 1; ; count++ {
		event, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return failed(err)
		}
		printLine(event)
		if count == *cancelAfter {
			cancel()
			logJSON(map[string]any{"log": "cancelled", "after": count})
			return nil
		}
	}
}

func printLine(m proto.Message) {
	line, _ := lineJSON.Marshal(m)
	fmt.Println(string(line))
}

// failed prints the call's status as a JSON line and exits 1.
func failed(err error) error {
	st := status.Convert(err)
	fmt.Printf(`{"status": %q, "message": %q}`+"\n", st.Code().String(), st.Message())
	os.Exit(1)
	return nil
}
