package openai

import (
	"encoding/json"
	"strings"
	"testing"

	"ember/app/reply"
)

const weatherTools = `,"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather now","parameters":{"type":"object","properties":{"city":{"type":"string","enum":["Paris","Oslo"]}},"required":["city"],"additionalProperties":false}}},` +
	`{"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{},"additionalProperties":false}}}]`

// TestToolChoiceRequired: with tool_choice "required" the reply is a call of a declared
// tool whose arguments follow its schema, as message.tool_calls (content null,
// finish_reason tool_calls); streamed, the call comes as one delta of tool_calls and no
// content; a named tool_choice calls that tool.
func TestToolChoiceRequired(t *testing.T) {
	h := New(newToolBackend(t), Options{})
	oneTool := `,"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string","enum":["Paris","Oslo"]}},"required":["city"],"additionalProperties":false}}}]`
	for _, c := range []struct{ tools, choice, want string }{
		{oneTool, `"required"`, "get_weather"},
		{weatherTools, `"required"`, ""}, // either, its arguments to its own schema
		{weatherTools, `{"type":"function","function":{"name":"get_time"}}`, "get_time"},
		{weatherTools, `{"type":"function","function":{"name":"get_weather"}}`, "get_weather"},
	} {
		var r chatCompletion
		postJSON(t, h, "/v1/chat/completions", chatBody(c.tools+`,"tool_choice":`+c.choice+`,"temperature":0,"max_tokens":500`), &r)
		ch := r.Choices[0]
		if ch.FinishReason != "tool_calls" || ch.Message.Content != nil || len(ch.Message.ToolCalls) != 1 {
			t.Fatalf("%s: %+v", c.choice, ch)
		}
		call := ch.Message.ToolCalls[0]
		checkCall(t, c.choice, call)
		if c.want != "" && call.Function.Name != c.want {
			t.Errorf("%s: called %s", c.choice, call.Function.Name)
		}

		code, body := post(t, h, "/v1/chat/completions", chatBody(c.tools+`,"tool_choice":`+c.choice+`,"temperature":0,"max_tokens":500,"stream":true`))
		if code != 200 {
			t.Fatalf("%s stream: %d %s", c.choice, code, body)
		}
		var calls []toolCall
		var finish string
		for _, ev := range sseEvents(t, body) {
			if ev == "[DONE]" {
				continue
			}
			var chunk chatChunk
			if err := json.Unmarshal([]byte(ev), &chunk); err != nil {
				t.Fatal(err)
			}
			d := chunk.Choices[0].Delta
			if d.Content != nil && *d.Content != "" {
				t.Errorf("%s stream: content %q", c.choice, *d.Content)
			}
			calls = append(calls, d.ToolCalls...)
			if f := chunk.Choices[0].FinishReason; f != nil {
				finish = *f
			}
		}
		if finish != "tool_calls" || len(calls) != 1 || calls[0].Index == nil || *calls[0].Index != 0 {
			t.Fatalf("%s stream: finish %q, calls %+v", c.choice, finish, calls)
		}
		checkCall(t, c.choice+" stream", calls[0])
		if calls[0].Function != call.Function {
			t.Errorf("%s: streamed %+v, complete %+v", c.choice, calls[0].Function, call.Function)
		}
	}
}

func checkCall(t *testing.T, what string, c toolCall) {
	t.Helper()
	if c.Type != "function" || !strings.HasPrefix(c.ID, "call_") {
		t.Errorf("%s: call %+v", what, c)
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(c.Function.Arguments), &args); err != nil {
		t.Fatalf("%s: arguments %q: %v", what, c.Function.Arguments, err)
	}
	switch c.Function.Name {
	case "get_time":
		if len(args) != 0 {
			t.Errorf("%s: get_time arguments %v", what, args)
		}
	case "get_weather":
		if _, ok := args["city"].(string); !ok || len(args) != 1 {
			t.Errorf("%s: get_weather arguments %v", what, args)
		}
	default:
		t.Errorf("%s: called %q", what, c.Function.Name)
	}
}

// TestToolChoiceNone: tool_choice "none" answers in text, as without tools; "auto" with
// a reply that is no call is the same text (the tiny model writes stories).
func TestToolChoiceNone(t *testing.T) {
	h := New(newToolBackend(t), Options{})
	var plain, none, auto chatCompletion
	postJSON(t, h, "/v1/chat/completions", chatBody(`,"temperature":0,"max_tokens":12`), &plain)
	postJSON(t, h, "/v1/chat/completions", chatBody(weatherTools+`,"tool_choice":"none","temperature":0,"max_tokens":12`), &none)
	postJSON(t, h, "/v1/chat/completions", chatBody(weatherTools+`,"temperature":0,"max_tokens":12`), &auto)
	if p, n := plain.Choices[0], none.Choices[0]; n.Message.text() != p.Message.text() || n.FinishReason != p.FinishReason || n.Message.ToolCalls != nil {
		t.Errorf("none: %+v, without tools %+v", n, p)
	}
	if a := auto.Choices[0]; a.Message.text() == "" || a.FinishReason != "length" || a.Message.ToolCalls != nil {
		t.Errorf("auto: %+v", a)
	}
}

// TestToolTurnsAccepted: a conversation with an assistant's tool call (content null)
// and the tool's answer is taken.
func TestToolTurnsAccepted(t *testing.T) {
	h := New(newToolBackend(t), Options{})
	body := `{"model":"stories260K","max_tokens":4,"messages":[{"role":"user","content":"Weather?"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},` +
		`{"role":"tool","tool_call_id":"call_1","content":"21 C"}]` + weatherTools + `}`
	var r chatCompletion
	postJSON(t, h, "/v1/chat/completions", body, &r)
	if len(r.Choices) != 1 || r.Usage.CompletionTokens == 0 {
		t.Errorf("%+v", r)
	}
}

// TestToolErrors: malformed tools and tool_choice are 400s naming the parameter.
func TestToolErrors(t *testing.T) {
	h := New(newToolBackend(t), Options{})
	for _, c := range []struct{ name, extra, param string }{
		{"type", `,"tools":[{"type":"retrieval","function":{"name":"a"}}]`, "tools"},
		{"name", `,"tools":[{"type":"function","function":{"name":"a b"}}]`, "tools"},
		{"duplicate", `,"tools":[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"a"}}]`, "tools"},
		{"parameters", `,"tools":[{"type":"function","function":{"name":"a","parameters":[1]}}]`, "tools"},
		{"unknown choice", weatherTools + `,"tool_choice":"always"`, "tool_choice"},
		{"unknown function", weatherTools + `,"tool_choice":{"type":"function","function":{"name":"nope"}}`, "tool_choice"},
		{"choice shape", weatherTools + `,"tool_choice":{"type":"x"}`, "tool_choice"},
		{"required without tools", `,"tool_choice":"required"`, "tool_choice"},
		{"with json mode", weatherTools + `,"tool_choice":"required","response_format":{"type":"json_object"}`, "tool_choice"},
	} {
		code, body := post(t, h, "/v1/chat/completions", chatBody(c.extra))
		var e struct {
			Error struct{ Param *string } `json:"error"`
		}
		json.Unmarshal(body, &e)
		if code != 400 || e.Error.Param == nil || *e.Error.Param != c.param {
			t.Errorf("%s: %d %s", c.name, code, body)
		}
	}
}

// TestParallelToolCalls: parallel_tool_calls false keeps a reply's first call only.
func TestParallelToolCalls(t *testing.T) {
	_, calls := reply.ParseCalls(`<tool_call>{"name":"a","arguments":{}}</tool_call><tool_call>{"name":"b","arguments":{}}</tool_call>`, []string{"a", "b"})
	if got := (toolSetup{}).limit(calls); len(got) != 2 {
		t.Errorf("parallel: %d calls", len(got))
	}
	if got := (toolSetup{single: true}).limit(calls); len(got) != 1 || got[0].Name != "a" {
		t.Errorf("not parallel: %+v", got)
	}
}
