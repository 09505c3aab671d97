package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"time"

	"trpc.group/trpc-go/trpc-agent-go/agent/a2aagent"
	"trpc.group/trpc-go/trpc-agent-go/runner"
	"trpc.group/trpc-go/trpc-agent-go/server/agui"
)

// cmdAGUI serves trpc-agent-go's AG-UI server in front of an A2AAgent.
func cmdAGUI(args []string) error {
	fs := flag.NewFlagSet("agui", flag.ContinueOnError)
	upstream := fs.String("upstream", "", "upstream A2A agent URL")
	addr := fs.String("addr", "127.0.0.1:0", "listen address (loopback)")
	v1 := fs.Bool("v1", false, "use agent/a2aagent/v1 towards the upstream")
	path := fs.String("path", "/agui", "AG-UI endpoint path")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *upstream == "" {
		return fmt.Errorf("--upstream is required")
	}
	if *v1 {
		return errV1Unavailable
	}
	tp := installTracing()
	defer tp.Shutdown(context.Background())

	remote, err := a2aagent.New(a2aagent.WithAgentCardURL(*upstream), a2aagent.WithEnableStreaming(true))
	if err != nil {
		return fmt.Errorf("a2a agent: %w", err)
	}
	r := runner.NewRunner(remote.Info().Name, remote)
	defer r.Close()
	srv, err := agui.New(r, agui.WithPath(*path), agui.WithReasoningContentEnabled(true))
	if err != nil {
		return fmt.Errorf("agui server: %w", err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: requestLogger(srv.Handler()), ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("READY http://%s%s\n", ln.Addr().String(), srv.Path())
	return hs.Serve(ln)
}
