// The smallest agent the bridge can serve: the example of docs/agenthost.md.
package main

import (
	"context"
	"net"

	"google.golang.org/grpc"

	pb "trpcbridge/interop/agenthost/trpcbridgev1"
)

type weather struct {
	pb.UnimplementedAgentHostServer
}

func (weather) Describe(context.Context, *pb.DescribeRequest) (*pb.AgentInfo, error) {
	return &pb.AgentInfo{Name: "weather-agent", Description: "Weather"}, nil
}

func (weather) Run(req *pb.AgentRequest, stream grpc.ServerStreamingServer[pb.AgentEvent]) error {
	answer := &pb.ChatMessage{Role: "assistant", Content: "It is 20°C in Beijing."}
	return stream.Send(&pb.AgentEvent{Id: "chatcmpl-1", Object: "chat.completion", Done: true,
		Choices: []*pb.Choice{{Message: answer}}})
}

func main() {
	listener, _ := net.Listen("tcp", "127.0.0.1:50061")
	server := grpc.NewServer()
	pb.RegisterAgentHostServer(server, weather{})
	_ = server.Serve(listener)
}
