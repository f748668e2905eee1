package prompt

import (
	"context"
	"strings"
	"testing"
)

// toolConversation asks for the weather, has the assistant call a tool, and gives the
// tool's answer.
var toolConversation = []Message{
	{Role: "user", Content: "Weather in Paris?"},
	{Role: "assistant", ToolCalls: []ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city": "Paris", "days": 2}`}}},
	{Role: "tool", ToolCallID: "call_1", Name: "get_weather", Content: `{"temp": 21}`},
}

var weatherDef = []any{map[string]any{"type": "function", "function": map[string]any{
	"name": "get_weather", "description": "Current weather",
	"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
}}}

// TestToolTurns: the real templates that take tools render the definitions, the
// assistant's call in their own form (its arguments as JSON, decoded and written again
// with tojson) and the tool's answer.
func TestToolTurns(t *testing.T) {
	for _, c := range []struct {
		file string
		want []string
	}{
		{"qwen2.5-7b-instruct.jinja", []string{`"name": "get_weather"`, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 2}}\n</tool_call>",
			"<tool_response>\n{\"temp\": 21}\n</tool_response>"}},
		{"llama-3.1-8b-instruct.jinja", []string{`"name": "get_weather"`, `{"name": "get_weather", "parameters": {"city": "Paris", "days": 2}}`,
			"<|start_header_id|>ipython<|end_header_id|>"}},
	} {
		tpl := loadTemplate(t, c.file)
		if !tpl.UsesTools() {
			t.Errorf("%s: UsesTools false", c.file)
		}
		out, err := tpl.Render(context.Background(), toolConversation, Options{AddGenerationPrompt: true, Tools: weatherDef})
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: no %q in\n%s", c.file, w, out)
			}
		}
	}
}
