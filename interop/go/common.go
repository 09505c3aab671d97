package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"trpc.group/trpc-go/trpc-agent-go/agent"
	"trpc.group/trpc-go/trpc-agent-go/agent/llmagent"
	"trpc.group/trpc-go/trpc-agent-go/codeexecutor/local"
	"trpc.group/trpc-go/trpc-agent-go/event"
	"trpc.group/trpc-go/trpc-agent-go/model"
	"trpc.group/trpc-go/trpc-agent-go/tool"
)

var logMu sync.Mutex

// logJSON writes one JSON line to stderr.
func logJSON(v map[string]any) {
	logMu.Lock()
	defer logMu.Unlock()
	b, _ := marshalNoEscape(v)
	os.Stderr.Write(append(b, '\n'))
}

var outMu sync.Mutex

// printJSON writes one JSON line to stdout.
func printJSON(v any) {
	outMu.Lock()
	defer outMu.Unlock()
	b, _ := marshalNoEscape(v)
	os.Stdout.Write(append(b, '\n'))
}

func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// buildScenarioAgent builds the llmagent (wrapped for run logging) that
// plays scenario name.
func buildScenarioAgent(name, agentName string, chunkDelay time.Duration) (agent.Agent, error) {
	sc, ok := scenarios[name]
	if !ok {
		return nil, fmt.Errorf("unknown scenario %q (known: %v)", name, scenarioNames())
	}
	opts := []llmagent.Option{
		llmagent.WithModel(&scriptedModel{sc: sc, chunkDelay: chunkDelay}),
		llmagent.WithDescription("trpc-a2a-bridge interop peer, scenario " + name),
		llmagent.WithInstruction("You are a scripted test agent."),
		llmagent.WithGenerationConfig(model.GenerationConfig{Stream: true}),
	}
	if tools := scenarioTools(name); len(tools) > 0 {
		opts = append(opts, llmagent.WithTools(tools))
	}
	if sc.CodeExecution {
		dir, err := os.MkdirTemp("", "gopeer-code-")
		if err != nil {
			return nil, err
		}
		opts = append(opts, llmagent.WithCodeExecutor(local.New(local.WithWorkDir(dir), local.WithTimeout(20*time.Second))))
	}
	return &loggingAgent{inner: llmagent.New(agentName, opts...), scenario: name}, nil
}

// loggingAgent delegates to inner and logs run_start / run_end.
type loggingAgent struct {
	inner    agent.Agent
	scenario string
}

func (a *loggingAgent) Run(ctx context.Context, inv *agent.Invocation) (<-chan *event.Event, error) {
	userID, sessionID := "", ""
	if inv != nil && inv.Session != nil {
		userID, sessionID = inv.Session.UserID, inv.Session.ID
	}
	invID := ""
	if inv != nil {
		invID = inv.InvocationID
	}
	logJSON(map[string]any{"log": "run_start", "scenario": a.scenario, "invocation_id": invID,
		"user_id": userID, "session_id": sessionID})
	in, err := a.inner.Run(ctx, inv)
	if err != nil {
		logJSON(map[string]any{"log": "run_end", "canceled": ctx.Err() != nil, "error": err.Error(), "invocation_id": invID})
		return nil, err
	}
	out := make(chan *event.Event, 64)
	go func() {
		defer close(out)
		n := 0
		for e := range in {
			n++
			out <- e
		}
		logJSON(map[string]any{"log": "run_end", "canceled": ctx.Err() != nil, "events": n, "invocation_id": invID})
	}()
	return out, nil
}

func (a *loggingAgent) Tools() []tool.Tool                { return a.inner.Tools() }
func (a *loggingAgent) Info() agent.Info                  { return a.inner.Info() }
func (a *loggingAgent) SubAgents() []agent.Agent          { return a.inner.SubAgents() }
func (a *loggingAgent) FindSubAgent(n string) agent.Agent { return a.inner.FindSubAgent(n) }

// ---- event → JSON line ----

type jsonToolCall struct {
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Index    *int   `json:"index,omitempty"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type jsonMessage struct {
	Role             string         `json:"role,omitempty"`
	Content          string         `json:"content,omitempty"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolID           string         `json:"tool_id,omitempty"`
	ToolName         string         `json:"tool_name,omitempty"`
	ToolCalls        []jsonToolCall `json:"tool_calls,omitempty"`
	ContentParts     any            `json:"content_parts,omitempty"`
}

func convMessage(m model.Message) *jsonMessage {
	jm := &jsonMessage{Role: string(m.Role), Content: m.Content, ReasoningContent: m.ReasoningContent,
		ToolID: m.ToolID, ToolName: m.ToolName}
	if len(m.ContentParts) > 0 {
		jm.ContentParts = m.ContentParts
	}
	for _, tc := range m.ToolCalls {
		j := jsonToolCall{ID: tc.ID, Type: tc.Type, Index: tc.Index}
		j.Function.Name = tc.Function.Name
		j.Function.Arguments = string(tc.Function.Arguments)
		jm.ToolCalls = append(jm.ToolCalls, j)
	}
	if jm.Role == "" && jm.Content == "" && jm.ReasoningContent == "" && jm.ToolID == "" &&
		jm.ToolName == "" && jm.ToolCalls == nil && jm.ContentParts == nil {
		return nil
	}
	return jm
}

type jsonChoice struct {
	Index        int          `json:"index"`
	Message      *jsonMessage `json:"message,omitempty"`
	Delta        *jsonMessage `json:"delta,omitempty"`
	FinishReason *string      `json:"finish_reason,omitempty"`
}

type jsonError struct {
	Type    string  `json:"type,omitempty"`
	Message string  `json:"message,omitempty"`
	Code    *string `json:"code,omitempty"`
	Param   *string `json:"param,omitempty"`
}

type jsonEvent struct {
	ID         string             `json:"id,omitempty"`
	Object     string             `json:"object,omitempty"`
	IsPartial  bool               `json:"is_partial,omitempty"`
	Done       bool               `json:"done,omitempty"`
	Choices    []jsonChoice       `json:"choices,omitempty"`
	Tag        string             `json:"tag,omitempty"`
	StateDelta map[string]*string `json:"state_delta,omitempty"`
	Error      *jsonError         `json:"error,omitempty"`
	Author     string             `json:"author,omitempty"`
	// RequiresCompletion marks trpc-agent-go's per-LLM-step start event.
	RequiresCompletion bool `json:"requires_completion,omitempty"`
}

// eventToJSON renders an event in the interop line format.
func eventToJSON(e *event.Event) jsonEvent {
	var je jsonEvent
	if e == nil {
		return je
	}
	je.Tag = e.Tag
	je.Author = e.Author
	je.RequiresCompletion = e.RequiresCompletion
	if len(e.StateDelta) > 0 {
		je.StateDelta = map[string]*string{}
		keys := make([]string, 0, len(e.StateDelta))
		for k := range e.StateDelta {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := e.StateDelta[k]
			if v == nil {
				je.StateDelta[k] = nil
			} else {
				s := base64.StdEncoding.EncodeToString(v)
				je.StateDelta[k] = &s
			}
		}
	}
	if r := e.Response; r != nil {
		je.ID, je.Object, je.IsPartial, je.Done = r.ID, r.Object, r.IsPartial, r.Done
		for _, c := range r.Choices {
			je.Choices = append(je.Choices, jsonChoice{Index: c.Index, Message: convMessage(c.Message),
				Delta: convMessage(c.Delta), FinishReason: c.FinishReason})
		}
		if r.Error != nil {
			je.Error = &jsonError{Type: r.Error.Type, Message: r.Error.Message, Code: r.Error.Code, Param: r.Error.Param}
		}
	}
	return je
}
