package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "trpcbridge/interop/agenthost/trpcbridgev1"
)

// host is the AgentHost server; its fields are the misbehaviours the bridge's tests ask for.
type host struct {
	pb.UnimplementedAgentHostServer
	delay, firstDelay time.Duration
	dieAfter          int  // exit the process (a crash mid-stream) after this many events
	invalidAfter      int  // then send an event whose content part type the model refuses
	usage             bool // the complete LLM responses report their token usage
}

func (h *host) Describe(context.Context, *pb.DescribeRequest) (*pb.AgentInfo, error) {
	return agentInfo(), nil
}

func (h *host) Run(request *pb.AgentRequest, stream grpc.ServerStreamingServer[pb.AgentEvent]) error {
	ctx := stream.Context()
	md, _ := metadata.FromIncomingContext(ctx)
	logJSON(map[string]any{
		"log": "run", "text": request.GetText(), "context_id": request.GetContextId(),
		"user_id": request.GetUserId(), "x-user-id": first(md, "x-user-id"),
		"traceparent": first(md, "traceparent"),
	})
	wait := h.firstDelay
	for sent, event := range script(request.GetText()) {
		if !pause(ctx, wait) {
			logJSON(map[string]any{"log": "canceled", "sent": sent})
			return ctx.Err()
		}
		wait = h.delay
		if sent == h.dieAfter {
			logJSON(map[string]any{"log": "dying", "sent": sent})
			os.Exit(3)
		}
		if sent == h.invalidAfter {
			event.Choices = append(event.Choices, &pb.Choice{
				Message: &pb.ChatMessage{ContentParts: []*pb.ContentPart{{Type: "video"}}},
			})
		}
		if h.usage {
			event.Usage = usageOf(request.GetText(), event)
		}
		event.Timestamp = timestamppb.Now()
		if err := stream.Send(event); err != nil {
			logJSON(map[string]any{"log": "canceled", "sent": sent, "error": err.Error()})
			return err
		}
	}
	logJSON(map[string]any{"log": "done"})
	return nil
}

// pause waits d, or less if the run is cancelled: false then.
func pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

func first(md metadata.MD, key string) string {
	if values := md.Get(key); len(values) > 0 {
		return values[0]
	}
	return ""
}

func cmdServe(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on (port 0: any free port)")
	h := &host{}
	fs.DurationVar(&h.delay, "delay", 0, "pause between events")
	fs.DurationVar(&h.firstDelay, "first-delay", 0, "pause before the first event")
	fs.IntVar(&h.dieAfter, "die-after", -1, "exit the process after this many events (-1: never)")
	fs.IntVar(&h.invalidAfter, "invalid-after", -1, "after this many events send one that violates the model")
	fs.BoolVar(&h.usage, "usage", false, "complete LLM responses report token usage (words as tokens)")
	_ = fs.Parse(args)
	listener, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	server := grpc.NewServer()
	pb.RegisterAgentHostServer(server, h)
	fmt.Printf("READY grpc://%s\n", listener.Addr())
	return server.Serve(listener)
}
