package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"google.golang.org/protobuf/proto"

	pb "trpcbridge/interop/agenthost/trpcbridgev1"
)

// The scripted agent: the Go twin of bridge/demo_agent.py, event for event.
const (
	agentName        = "weather-agent"
	agentDescription = "Deterministic demo agent: weather tool, code execution, failures."
	expression       = "6 * 7"
	expressionValue  = 42
)

var (
	cityPattern  = regexp.MustCompile(`(?i)weather\s+in\s+([A-Za-z][A-Za-z .'-]*[A-Za-z])`)
	wordPattern  = regexp.MustCompile(`\S+\s*`)
	temperatures = map[string]int{"beijing": 20, "shanghai": 24, "shenzhen": 28, "paris": 14, "london": 11}
)

func agentInfo() *pb.AgentInfo {
	return &pb.AgentInfo{
		Name:        agentName,
		Description: agentDescription,
		Skills: []*pb.Skill{{
			Name: "get_weather", Description: "Current temperature of a city.", Tags: []string{"tool"},
		}},
	}
}

// script returns the events of one run, in order.
func script(text string) []*pb.AgentEvent {
	prompt := strings.ToLower(text)
	switch {
	case strings.Contains(prompt, "fail"):
		return failEvents()
	case strings.Contains(prompt, "code"):
		return codeEvents()
	default:
		return weatherEvents(text)
	}
}

func weatherEvents(text string) []*pb.AgentEvent {
	city := "Beijing"
	if m := cityPattern.FindStringSubmatch(text); m != nil {
		city = titleCase(strings.TrimSpace(m[1]))
	}
	temp, ok := temperatures[strings.ToLower(city)]
	if !ok {
		temp = 18
	}
	thinking := newResponseID()
	var events []*pb.AgentEvent
	reasoning := fmt.Sprintf("The user asks about the weather in %s; I should call get_weather.", city)
	for _, piece := range words(reasoning) {
		events = append(events, delta(thinking, &pb.ChatMessage{Role: "assistant", ReasoningContent: piece}))
	}
	// The call carries the complete reasoning, as a model's final response does; the
	// arguments use Python's json.dumps spacing, so that both agents send the same strings.
	events = append(events, complete(thinking, "chat.completion", &pb.ChatMessage{
		Role:             "assistant",
		ReasoningContent: reasoning,
		ToolCalls: []*pb.ToolCall{{
			Id: "call_001", Type: "function",
			Function: &pb.FunctionCall{Name: "get_weather", Arguments: fmt.Sprintf(`{"city": %s}`, jsonString(city))},
		}},
	}))
	events = append(events, complete("", "tool.response", &pb.ChatMessage{
		Role:     "tool",
		Content:  fmt.Sprintf(`{"city": %s, "temp": %d}`, jsonString(city), temp),
		ToolId:   "call_001",
		ToolName: "get_weather",
	}))
	answerID := newResponseID()
	answer := fmt.Sprintf("It is %d°C in %s.", temp, city)
	for _, piece := range words(answer) {
		events = append(events, delta(answerID, &pb.ChatMessage{Role: "assistant", Content: piece}))
	}
	final := complete(answerID, "chat.completion", &pb.ChatMessage{Role: "assistant", Content: answer})
	final.Done = true
	return append(events, final)
}

func codeEvents() []*pb.AgentEvent {
	text := fmt.Sprintf("Let me compute it.\n```python\nprint(%s)\n```", expression)
	code := complete("", "postprocessing.code_execution", &pb.ChatMessage{Role: "assistant", Content: text})
	code.Tag = "code_execution_code"
	result := complete("", "postprocessing.code_execution", &pb.ChatMessage{
		Role: "assistant", Content: fmt.Sprintf("%d\n", expressionValue),
	})
	result.Tag = "code_execution_result"
	answer := complete(newResponseID(), "chat.completion", &pb.ChatMessage{
		Role: "assistant", Content: fmt.Sprintf("The result is %d.", expressionValue),
	})
	answer.Done = true
	return []*pb.AgentEvent{
		complete(newResponseID(), "chat.completion", &pb.ChatMessage{Role: "assistant", Content: text}),
		code, result, answer,
	}
}

func failEvents() []*pb.AgentEvent {
	id := newResponseID()
	failure := stamp(&pb.AgentEvent{
		Id: id, Object: "error", Done: true,
		Error: &pb.ResponseError{
			Type: "api_error", Message: "the demo agent was asked to fail", Code: proto.String("DEMO_FAILURE"),
		},
	})
	return []*pb.AgentEvent{delta(id, &pb.ChatMessage{Role: "assistant", Content: "Working on it"}), failure}
}

// usageOf is the token usage a complete LLM response (chat.completion, not partial)
// reports, counting words as tokens: the prompt's, and the response's text and reasoning;
// nil for every other event.
func usageOf(prompt string, event *pb.AgentEvent) *pb.Usage {
	if event.GetObject() != "chat.completion" || event.GetIsPartial() || len(event.GetChoices()) == 0 {
		return nil
	}
	message := event.GetChoices()[0].GetMessage()
	input := int64(len(words(prompt)))
	output := int64(len(words(message.GetReasoningContent())) + len(words(message.GetContent())))
	return &pb.Usage{PromptTokens: input, CompletionTokens: output, TotalTokens: input + output}
}

// delta is a streamed piece (chat.completion.chunk, partial).
func delta(id string, piece *pb.ChatMessage) *pb.AgentEvent {
	return stamp(&pb.AgentEvent{
		Id: id, Object: "chat.completion.chunk", IsPartial: true, Choices: []*pb.Choice{{Delta: piece}},
	})
}

// complete is a whole (non-partial) message.
func complete(id, object string, message *pb.ChatMessage) *pb.AgentEvent {
	return stamp(&pb.AgentEvent{Id: id, Object: object, Choices: []*pb.Choice{{Message: message}}})
}

// stamp gives an event what the Python model gives every event: a unique id (its time
// is set when it is sent).
func stamp(event *pb.AgentEvent) *pb.AgentEvent {
	event.EventId = randomHex(16)
	return event
}

func newResponseID() string { return "chatcmpl-" + randomHex(12) }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func words(text string) []string { return wordPattern.FindAllString(text, -1) }

// titleCase is Python's str.title(): a letter after a non-letter is upper case, the rest lower.
func titleCase(s string) string {
	out := []rune(s)
	previousLetter := false
	for i, r := range out {
		if previousLetter {
			out[i] = unicode.ToLower(r)
		} else {
			out[i] = unicode.ToUpper(r)
		}
		previousLetter = unicode.IsLetter(r)
	}
	return string(out)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
