package main

import (
	"context"
	"flag"
	"fmt"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"trpc.group/trpc-go/trpc-a2a-go/client"
	"trpc.group/trpc-go/trpc-agent-go/agent"
	"trpc.group/trpc-go/trpc-agent-go/agent/a2aagent"
	"trpc.group/trpc-go/trpc-agent-go/model"
	"trpc.group/trpc-go/trpc-agent-go/runner"
)

// installTracing installs the W3C TraceContext propagator and a real SDK
// tracer provider (no exporter) as OTel globals.
func installTracing() *sdktrace.TracerProvider {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	return tp
}

func cmdCall(args []string) error {
	fs := flag.NewFlagSet("call", flag.ContinueOnError)
	url := fs.String("url", "", "agent URL (card is fetched from URL/.well-known/agent-card.json)")
	message := fs.String("message", "hello", "user message text")
	v1 := fs.Bool("v1", false, "use agent/a2aagent/v1 (A2A 1.0)")
	stream := fs.Bool("stream", false, "force streaming (message/stream)")
	noStream := fs.Bool("no-stream", false, "force unary (message/send)")
	user := fs.String("user", "gopeer-user", "user id (sent as X-User-ID)")
	sessionID := fs.String("session", "gopeer-session", "session id")
	cancelAfter := fs.Int("cancel-after", 0, "cancel the context after N events (0 = never)")
	oauthID := fs.String("oauth2-client-id", "", "get a token with OAuth2 client credentials (trpc-a2a-go's client option)")
	oauthSecret := fs.String("oauth2-client-secret", "", "the client secret")
	oauthTokenURL := fs.String("oauth2-token-url", "", "the provider's token endpoint")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *url == "" {
		return fmt.Errorf("--url is required")
	}
	if *stream && *noStream {
		return fmt.Errorf("--stream and --no-stream are exclusive")
	}
	if *v1 {
		return errV1Unavailable
	}
	tp := installTracing()
	defer tp.Shutdown(context.Background())

	options := []a2aagent.Option{a2aagent.WithAgentCardURL(*url)}
	if *oauthID != "" {
		options = append(options, a2aagent.WithA2AClientExtraOptions(
			client.WithOAuth2ClientCredentials(*oauthID, *oauthSecret, *oauthTokenURL, []string{"agent"})))
	}
	remote, err := a2aagent.New(options...)
	if err != nil {
		return fmt.Errorf("a2a agent: %w", err)
	}
	r := runner.NewRunner("gopeer-client", remote)
	defer r.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx, span := otel.Tracer("gopeer").Start(ctx, "gopeer.call")
	defer span.End()
	logJSON(map[string]any{"log": "trace", "trace_id": span.SpanContext().TraceID().String(),
		"span_id": span.SpanContext().SpanID().String()})

	var runOpts []agent.RunOption
	if *stream {
		runOpts = append(runOpts, agent.WithStream(true))
	} else if *noStream {
		runOpts = append(runOpts, agent.WithStream(false))
	}
	events, err := r.Run(ctx, *user, *sessionID, model.NewUserMessage(*message), runOpts...)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	n := 0
	for e := range events {
		n++
		printJSON(eventToJSON(e))
		if *cancelAfter > 0 && n == *cancelAfter {
			logJSON(map[string]any{"log": "cancel", "after_events": n})
			cancel()
		}
	}
	logJSON(map[string]any{"log": "call_end", "events": n, "canceled": ctx.Err() != nil})
	return nil
}
