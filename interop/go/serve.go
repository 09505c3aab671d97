package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"trpc.group/trpc-go/trpc-a2a-go/taskmanager"
	a2aserver "trpc.group/trpc-go/trpc-agent-go/server/a2a"
)

// errV1Unavailable explains why the A2A 1.0 (v1) path cannot be built.
var errV1Unavailable = errors.New("the A2A 1.0 path (server/a2a/v1, agent/a2aagent/v1) is not built: " +
	"trpc-agent-go v1.11.x requires trpc.group/trpc-go/trpc-a2a-go/v2@v2.0.0-alpha.3.0.20260728070620-f4f0b6dd56ad, " +
	"which the Go module proxy refuses (403); see README.md")

// requestLogger logs one JSON line per incoming HTTP request.
func requestLogger(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entry := map[string]any{
			"log":         "request",
			"http_method": r.Method,
			"path":        r.URL.Path,
			"traceparent": r.Header.Get("traceparent"),
			"x_user_id":   r.Header.Get("X-User-ID"),
		}
		if v := r.Header.Get("A2A-Version"); v != "" {
			entry["a2a_version"] = v
		}
		if r.Body != nil && r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			r.Body.Close()
			r.Body = io.NopCloser(bytes.NewReader(body))
			if err == nil {
				var rpc struct {
					Method string `json:"method"`
				}
				if json.Unmarshal(body, &rpc) == nil && rpc.Method != "" {
					entry["method"] = rpc.Method
				}
			}
		}
		logJSON(entry)
		next.ServeHTTP(w, r)
	})
}

// blockingTaskManager is trpc-a2a-go's default memory task manager with
// blocking subscriber sends: with the default (non-blocking) send, a producer
// that outruns the HTTP writer by 1024 events aborts the stream ("event queue is
// full or closed"), which an unthrottled 10,000-delta stream always does.
func blockingTaskManager(processor taskmanager.MessageProcessor) taskmanager.TaskManager {
	manager, err := taskmanager.NewMemoryTaskManager(processor, taskmanager.WithTaskSubscriberBlockingSend(true))
	if err != nil {
		panic(err) // only for a nil processor, which a2aserver.New never passes
	}
	return manager
}

func cmdServe(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	scenario := fs.String("scenario", "text", "scenario name")
	addr := fs.String("addr", "127.0.0.1:0", "listen address (loopback)")
	v1 := fs.Bool("v1", false, "serve the A2A 1.0 path (server/a2a/v1)")
	structured := fs.Bool("structured-errors", false, "enable structured task errors (failed status)")
	name := fs.String("name", "weather-agent", "agent (card) name")
	chunkDelay := fs.Duration("chunk-delay", 5*time.Millisecond, "delay before each scripted model response")
	blocking := fs.Bool("blocking-send", false, "task subscribers wait for a slow writer instead of failing the "+
		"stream when their 1024-event queue is full (trpc-a2a-go's TaskSubscriberBlockingSend)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *v1 {
		return errV1Unavailable
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	actual := ln.Addr().String()
	ag, err := buildScenarioAgent(*scenario, *name, *chunkDelay)
	if err != nil {
		return err
	}
	if _, err := installOTLPTracing(); err != nil {
		return fmt.Errorf("otlp tracing: %w", err)
	}
	opts := []a2aserver.Option{
		a2aserver.WithHost("http://" + actual + "/"),
		a2aserver.WithAgent(ag, true),
		a2aserver.WithStructuredTaskErrors(*structured),
	}
	if *blocking {
		opts = append(opts, a2aserver.WithTaskManagerBuilder(blockingTaskManager))
	}
	srv, err := a2aserver.New(opts...)
	if err != nil {
		return fmt.Errorf("a2a server: %w", err)
	}
	handler := requestLogger(srv.Handler())
	if os.Getenv(agentSpansEnv) == "1" {
		handler = requestLogger(withTraceContext(srv.Handler()))
	}
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("READY http://%s/\n", actual)
	return hs.Serve(ln)
}
