package main

import (
	"context"
	"net/http"
	"os"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	atrace "trpc.group/trpc-go/trpc-agent-go/telemetry/trace"
)

// agentSpansEnv switches on trpc-agent-go's own spans (agent, model, tool), recorded
// through its telemetry/trace package, as atrace.Start would in a deployment.
const agentSpansEnv = "GOPEER_AGENT_SPANS"

// installOTLPTracing exports the server's spans over OTLP/HTTP (batched) when
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, as
// a traced trpc-agent-go deployment would; the benchmarks compare the bridge
// and this server with tracing on against the same collector. Without either
// variable tracing stays off (nil). With GOPEER_AGENT_SPANS=1 trpc-agent-go's
// own spans are recorded too (the playground's trace view shows them); off by
// default, so the benchmarks' traced Go server stays what it was.
func installOTLPTracing() (*sdktrace.TracerProvider, error) {
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return nil, nil
	}
	exporter, err := otlptracehttp.New(context.Background())
	if err != nil {
		return nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	if os.Getenv(agentSpansEnv) == "1" {
		atrace.TracerProvider = tp
		atrace.Tracer = tp.Tracer("trpc.agent.go")
	}
	return tp, nil
}

// withTraceContext makes the caller's W3C trace context (traceparent) the parent of
// what the request runs, as otelhttp would: trpc-agent-go's server does not read it,
// so without this its agent spans would start a trace of their own.
func withTraceContext(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := otel.GetTextMapPropagator().Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
