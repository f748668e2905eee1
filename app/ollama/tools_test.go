package ollama

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"ember/app/enginetest"
	"ember/inference/engine"
)

// TestToolCalls: with tools declared, a reply that is a call (here made one by a format
// schema: the tiny model writes stories otherwise) comes back as message.tool_calls with
// no content, streamed and not; the official client decodes both. A conversation with
// an assistant's call and the tool's answer is taken.
func TestToolCalls(t *testing.T) {
	// room for the tool instructions written into the prompt (~400 tokens)
	b := &testBackend{enginetest.New(t, storiesPath, engine.Options{ContextSize: 1024, BlockSize: 16})}
	c, _ := newClient(t, New(b, Options{}))
	ctx := context.Background()
	var params api.ToolFunctionParameters
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{},"required":[]}`), &params); err != nil {
		t.Fatal(err)
	}
	tools := api.Tools{{Type: "function", Function: api.ToolFunction{Name: "get_time", Description: "The time now", Parameters: params}}}
	format := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","enum":["get_time"]},"arguments":{"type":"object","properties":{},"additionalProperties":false}},"required":["name","arguments"],"additionalProperties":false}`)
	opts := map[string]any{"temperature": 0, "num_predict": 500}
	for _, stream := range []bool{false, true} {
		var calls []api.ToolCall
		var content strings.Builder
		var done bool
		err := c.Chat(ctx, &api.ChatRequest{Model: "stories260K", Messages: storyMsgs, Tools: tools, Format: format, Options: opts, Stream: ptr(stream)},
			func(r api.ChatResponse) error {
				calls = append(calls, r.Message.ToolCalls...)
				content.WriteString(r.Message.Content)
				done = done || r.Done
				return nil
			})
		if err != nil {
			t.Fatalf("stream %v: %v", stream, err)
		}
		if !done || len(calls) != 1 || calls[0].Function.Name != "get_time" || calls[0].Function.Arguments.Len() != 0 || content.String() != "" {
			t.Fatalf("stream %v: calls %+v, content %q", stream, calls, content.String())
		}
	}
	args := api.NewToolCallFunctionArguments()
	args.Set("city", "Paris")
	msgs := []api.Message{storyMsgs[0], {Role: "assistant", ToolCalls: []api.ToolCall{{Function: api.ToolCallFunction{Name: "get_time", Arguments: args}}}},
		{Role: "tool", ToolName: "get_time", Content: "noon"}}
	var got api.ChatResponse
	err := c.Chat(ctx, &api.ChatRequest{Model: "stories260K", Messages: msgs, Tools: tools, Options: map[string]any{"num_predict": 4}, Stream: ptr(false)},
		func(r api.ChatResponse) error { got = r; return nil })
	if err != nil || !got.Done || got.EvalCount == 0 {
		t.Fatalf("%v %+v", err, got)
	}
}
