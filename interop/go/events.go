package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"trpc.group/trpc-go/trpc-agent-go/agent"
	"trpc.group/trpc-go/trpc-agent-go/model"
	"trpc.group/trpc-go/trpc-agent-go/runner"
)

// cmdEvents runs a scenario agent in-process through trpc-agent-go's runner
// and prints every runner event as one JSON line (no A2A involved).
func cmdEvents(args []string) error {
	fs := flag.NewFlagSet("events", flag.ContinueOnError)
	scenario := fs.String("scenario", "text", "scenario name")
	message := fs.String("message", "hello", "user message text")
	name := fs.String("name", "weather-agent", "agent name")
	stream := fs.Bool("stream", true, "run with streaming (agent.WithStream)")
	chunkDelay := fs.Duration("chunk-delay", 0, "delay before each scripted model response")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ag, err := buildScenarioAgent(*scenario, *name, *chunkDelay)
	if err != nil {
		return err
	}
	r := runner.NewRunner("gopeer-events", ag)
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	events, err := r.Run(ctx, "gopeer-user", "gopeer-session", model.NewUserMessage(*message), agent.WithStream(*stream))
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	for e := range events {
		printJSON(eventToJSON(e))
	}
	return nil
}
