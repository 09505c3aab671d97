package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"trpc.group/trpc-go/trpc-agent-go/model"
	"trpc.group/trpc-go/trpc-agent-go/tool"
	"trpc.group/trpc-go/trpc-agent-go/tool/function"
)

// scriptedCreated is the fixed "created" timestamp of every scripted response.
const scriptedCreated int64 = 1700000000

// scriptedModelName is the model name reported by the scripted model.
const scriptedModelName = "scripted-model"

// toolCallSpec is one tool call the scripted model asks for.
type toolCallSpec struct {
	ID   string
	Name string
	Args string // verbatim JSON argument string
}

// turn is what the scripted model answers for one LLM call.
type turn struct {
	ID        string
	Reasoning []string // streamed reasoning_content chunks
	Content   []string // streamed content chunks
	ToolCalls []toolCallSpec
	// ErrAfterContent, when set, makes the model emit the content chunks
	// and then a Response carrying this error instead of a final response.
	ErrAfterContent *model.ResponseError
}

// scenario is the full deterministic script: turns[i] answers the LLM call
// made after i earlier assistant messages of the current user turn.
type scenario struct {
	Name        string
	Description string
	Turns       []turn
	// CodeExecution enables trpc-agent-go's local code executor.
	CodeExecution bool
}

func strp(s string) *string { return &s }

func longChunks(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("t%d ", i)
	}
	return out
}

var scenarios = map[string]scenario{
	"text": {
		Name:        "text",
		Description: `streams "Hello" " from" " trpc" "." then the final full response`,
		Turns:       []turn{{ID: "chatcmpl-text-1", Content: []string{"Hello", " from", " trpc", "."}}},
	},
	"reasoning": {
		Name:        "reasoning",
		Description: `reasoning_content "Let me think" " about it." then content "The answer" " is 42."`,
		Turns: []turn{{
			ID:        "chatcmpl-reason-1",
			Reasoning: []string{"Let me think", " about it."},
			Content:   []string{"The answer", " is 42."},
		}},
	},
	"tool": {
		Name:        "tool",
		Description: `get_weather(Beijing) tool call, real tool result, then "It is" " 20°C" " in Beijing."`,
		Turns: []turn{
			{ID: "chatcmpl-tool-1", ToolCalls: []toolCallSpec{{ID: "call_001", Name: "get_weather", Args: `{"city":"Beijing"}`}}},
			{ID: "chatcmpl-tool-2", Content: []string{"It is", " 20°C", " in Beijing."}},
		},
	},
	"reasoning_tool": {
		Name:        "reasoning_tool",
		Description: `reasoning, then get_weather(Beijing) in the same response, real tool result, then "It is" " 20°C" " in Beijing." (the playground's Go agent)`,
		Turns: []turn{
			{
				ID:        "chatcmpl-rtool-1",
				Reasoning: []string{"The user asks about Beijing;", " I should call get_weather."},
				ToolCalls: []toolCallSpec{{ID: "call_001", Name: "get_weather", Args: `{"city":"Beijing"}`}},
			},
			{ID: "chatcmpl-rtool-2", Content: []string{"It is", " 20°C", " in Beijing."}},
		},
	},
	"parallel_tools": {
		Name:        "parallel_tools",
		Description: `one response with get_weather(Beijing) call_001 + get_weather(Shanghai) call_002, then an answer`,
		Turns: []turn{
			{ID: "chatcmpl-ptool-1", ToolCalls: []toolCallSpec{
				{ID: "call_001", Name: "get_weather", Args: `{"city":"Beijing"}`},
				{ID: "call_002", Name: "get_weather", Args: `{"city":"Shanghai"}`},
			}},
			{ID: "chatcmpl-ptool-2", Content: []string{"Beijing is 20°C", " and Shanghai is 25°C."}},
		},
	},
	"code": {
		Name:        "code",
		Description: "model answers with a python code block; trpc-agent-go's local code executor (python3) runs it; the run ends after the result",
		Turns: []turn{
			{ID: "chatcmpl-code-1", Content: []string{"```python\n", "print(6 * 7)\n", "```"}},
		},
		CodeExecution: true,
	},
	"error": {
		Name:        "error",
		Description: `streams "Partial" then a Response with Error{api_error, boom, E42}`,
		Turns: []turn{{
			ID:              "chatcmpl-error-1",
			Content:         []string{"Partial"},
			ErrAfterContent: &model.ResponseError{Type: model.ErrorTypeAPIError, Message: "boom", Code: strp("E42")},
		}},
	},
	"state_delta": {
		Name:        "state_delta",
		Description: `set_counter tool call; the tool's result event carries StateDelta {"counter":"1","gone":nil}; then "Counter" " set."`,
		Turns: []turn{
			{ID: "chatcmpl-state-1", ToolCalls: []toolCallSpec{{ID: "call_001", Name: "set_counter", Args: `{"value":1}`}}},
			{ID: "chatcmpl-state-2", Content: []string{"Counter", " set."}},
		},
	},
	"long": {
		Name:        "long",
		Description: `1000 chunks "t0 " .. "t999 " under one response id`,
		Turns:       []turn{{ID: "chatcmpl-long-1", Content: longChunks(1000)}},
	},
	"long10k": {
		Name:        "long10k",
		Description: `10000 chunks "t0 " .. "t9999 " under one response id (benchmarks)`,
		Turns:       []turn{{ID: "chatcmpl-long-1", Content: longChunks(10000)}},
	},
	"unicode": {
		Name:        "unicode",
		Description: `HTML-special characters, emoji and CJK`,
		Turns:       []turn{{ID: "chatcmpl-unicode-1", Content: []string{"a<b>&c", " 😀", " 你好"}}},
	},
}

func scenarioNames() []string {
	names := make([]string, 0, len(scenarios))
	for n := range scenarios {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// scriptedModel implements model.Model with a fixed script.
type scriptedModel struct {
	sc         scenario
	chunkDelay time.Duration
}

func (m *scriptedModel) Info() model.Info { return model.Info{Name: scriptedModelName} }

// step counts assistant messages after the last user message: 0 for the
// first LLM call of a user turn, 1 after one tool/code round, ...
func step(req *model.Request) int {
	last := -1
	for i, msg := range req.Messages {
		if msg.Role == model.RoleUser {
			last = i
		}
	}
	n := 0
	for _, msg := range req.Messages[last+1:] {
		if msg.Role == model.RoleAssistant {
			n++
		}
	}
	return n
}

func (m *scriptedModel) GenerateContent(ctx context.Context, req *model.Request) (<-chan *model.Response, error) {
	idx := step(req)
	if idx >= len(m.sc.Turns) {
		idx = len(m.sc.Turns) - 1
	}
	t := m.sc.Turns[idx]
	stream := req.GenerationConfig.Stream
	ch := make(chan *model.Response, 1)
	go func() {
		defer close(ch)
		send := func(rsp *model.Response, delay bool) bool {
			if delay && m.chunkDelay > 0 {
				select {
				case <-ctx.Done():
				case <-time.After(m.chunkDelay):
				}
			}
			if ctx.Err() != nil {
				logJSON(map[string]any{"log": "model_canceled", "scenario": m.sc.Name, "response_id": t.ID})
				return false
			}
			select {
			case ch <- rsp:
				return true
			case <-ctx.Done():
				logJSON(map[string]any{"log": "model_canceled", "scenario": m.sc.Name, "response_id": t.ID})
				return false
			}
		}
		base := func() *model.Response {
			return &model.Response{ID: t.ID, Created: scriptedCreated, Model: scriptedModelName, Timestamp: time.Now()}
		}
		if stream {
			for _, c := range t.Reasoning {
				r := base()
				r.Object = model.ObjectTypeChatCompletionChunk
				r.IsPartial = true
				r.Choices = []model.Choice{{Delta: model.Message{Role: model.RoleAssistant, ReasoningContent: c}}}
				if !send(r, true) {
					return
				}
			}
			for _, c := range t.Content {
				r := base()
				r.Object = model.ObjectTypeChatCompletionChunk
				r.IsPartial = true
				r.Choices = []model.Choice{{Delta: model.Message{Role: model.RoleAssistant, Content: c}}}
				if !send(r, true) {
					return
				}
			}
		}
		if t.ErrAfterContent != nil {
			r := base()
			r.Object = model.ObjectTypeError
			e := *t.ErrAfterContent
			r.Error = &e
			r.Done = true
			send(r, true)
			return
		}
		r := base()
		r.Object = model.ObjectTypeChatCompletion
		msg := model.Message{
			Role:             model.RoleAssistant,
			Content:          strings.Join(t.Content, ""),
			ReasoningContent: strings.Join(t.Reasoning, ""),
		}
		finish := "stop"
		for i, tc := range t.ToolCalls {
			i := i
			msg.ToolCalls = append(msg.ToolCalls, model.ToolCall{
				Type:     "function",
				ID:       tc.ID,
				Index:    &i,
				Function: model.FunctionDefinitionParam{Name: tc.Name, Arguments: []byte(tc.Args)},
			})
		}
		if len(t.ToolCalls) > 0 {
			finish = "tool_calls"
		}
		r.Choices = []model.Choice{{Message: msg, FinishReason: &finish}}
		r.Done = len(t.ToolCalls) == 0
		send(r, true)
	}()
	return ch, nil
}

// ---- real function tools ----

type weatherIn struct {
	City string `json:"city" jsonschema:"description=City name"`
}

type weatherOut struct {
	City string `json:"city"`
	Temp string `json:"temp"`
}

var cityTemps = map[string]string{"Beijing": "20°C", "Shanghai": "25°C"}

func getWeather(_ context.Context, in weatherIn) (weatherOut, error) {
	t, ok := cityTemps[in.City]
	if !ok {
		t = "unknown"
	}
	return weatherOut{City: in.City, Temp: t}, nil
}

type counterIn struct {
	Value int `json:"value"`
}

type counterOut struct {
	Ok bool `json:"ok"`
}

func setCounter(_ context.Context, _ counterIn) (counterOut, error) { return counterOut{Ok: true}, nil }

// stateTool wraps a function tool and contributes a session state delta to
// the tool.response event through trpc-agent-go's StateDelta hook.
type stateTool struct {
	*function.FunctionTool[counterIn, counterOut]
}

// StateDelta is picked up by trpc-agent-go's function call processor.
func (s stateTool) StateDelta(_ string, args []byte, _ []byte) map[string][]byte {
	var in counterIn
	_ = json.Unmarshal(args, &in)
	return map[string][]byte{"counter": []byte(fmt.Sprint(in.Value)), "gone": nil}
}

func scenarioTools(name string) []tool.Tool {
	switch name {
	case "tool", "parallel_tools", "reasoning_tool":
		return []tool.Tool{function.NewFunctionTool(getWeather,
			function.WithName("get_weather"), function.WithDescription("Get the current weather of a city"))}
	case "state_delta":
		return []tool.Tool{stateTool{function.NewFunctionTool(setCounter,
			function.WithName("set_counter"), function.WithDescription("Set the session counter"))}}
	}
	return nil
}
