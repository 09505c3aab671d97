package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "trpcbridge/interop/agenthost/trpcbridgev1"
)

// The bridge's golden vector of the contract: the bytes Python writes for each model event
// parse in Go to the same proto JSON, and Go writes them back byte for byte.
func TestGoldenVectorP01(t *testing.T) {
	raw, err := os.ReadFile("../../tests/vectors/P01-agent-proto.json")
	if err != nil {
		t.Fatal(err)
	}
	var vector struct {
		Cases []struct {
			Name        string         `json:"name"`
			ProtoJSON   map[string]any `json:"proto_json"`
			ProtoBase64 string         `json:"proto_base64"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &vector); err != nil {
		t.Fatal(err)
	}
	if len(vector.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range vector.Cases {
		t.Run(c.Name, func(t *testing.T) {
			wire, err := base64.StdEncoding.DecodeString(c.ProtoBase64)
			if err != nil {
				t.Fatal(err)
			}
			event := &pb.AgentEvent{}
			if err := proto.Unmarshal(wire, event); err != nil {
				t.Fatal(err)
			}
			text, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(event)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(text, &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.ProtoJSON) {
				t.Errorf("proto JSON\n got %v\nwant %v", got, c.ProtoJSON)
			}
			again, err := proto.MarshalOptions{Deterministic: true}.Marshal(event)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, wire) {
				t.Errorf("Go writes other bytes than Python:\n got %x\nwant %x", again, wire)
			}
		})
	}
}

// The scripted agent's events are what the Python demo agent's constructors build.
func TestWeatherScript(t *testing.T) {
	events := script("What is the weather in new york?")
	last := events[len(events)-1]
	if got := last.GetChoices()[0].GetMessage().GetContent(); got != "It is 18°C in New York." {
		t.Errorf("answer %q", got)
	}
	call := events[len(events)-len(words("It is 18°C in New York."))-3]
	if got := call.GetChoices()[0].GetMessage().GetToolCalls()[0].GetFunction().GetArguments(); got != `{"city": "New York"}` {
		t.Errorf("tool call arguments %q", got)
	}
	if got := titleCase("o'neil town"); got != "O'Neil Town" {
		t.Errorf("titleCase %q", got)
	}
}
