package reply

import (
	"strings"
	"testing"
	"unicode/utf8"
)

var toolNames = []string{"get_weather", "search"}

// TestParseCalls: each model family's call form, several calls, text before calls,
// arguments as a string, and what is not a call (an undeclared name, stray text, a
// broken object, plain JSON content).
func TestParseCalls(t *testing.T) {
	for _, c := range []struct {
		name, in, content string
		calls             []string // name + " " + arguments
	}{
		{"hermes", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>", "", []string{`get_weather {"city":"Paris"}`}},
		{"hermes two, text before", "Let me look.\n<tool_call>{\"name\":\"search\",\"arguments\":{\"q\":\"a\"}}</tool_call>\n<tool_call>{\"name\":\"get_weather\",\"arguments\":{}}</tool_call>",
			"Let me look.", []string{`search {"q":"a"}`, `get_weather {}`}},
		{"hermes unclosed at the end", "<tool_call>{\"name\":\"search\",\"arguments\":{\"q\":\"x\"}}", "", []string{`search {"q":"x"}`}},
		{"llama json", `{"name": "get_weather", "parameters": {"city": "Oslo", "days": 2}}`, "", []string{`get_weather {"city":"Oslo","days":2}`}},
		{"llama python tag, two", `<|python_tag|>{"name": "search", "parameters": {"q": "b"}}; {"name": "get_weather", "parameters": {}}`, "",
			[]string{`search {"q":"b"}`, `get_weather {}`}},
		{"mistral", `[TOOL_CALLS] [{"name": "search", "arguments": {"q": "c"}}]`, "", []string{`search {"q":"c"}`}},
		{"openai shape, string arguments", `[{"type":"function","function":{"name":"search","arguments":"{\"q\": \"d\"}"}}]`, "", []string{`search {"q":"d"}`}},
		{"deepseek", "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Rome\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>", "",
			[]string{`get_weather {"city":"Rome"}`}},
		{"undeclared name", `{"name": "rm_rf", "arguments": {}}`, `{"name": "rm_rf", "arguments": {}}`, nil},
		{"plain JSON content", `{"answer": 42}`, `{"answer": 42}`, nil},
		{"arguments not an object", `{"name": "search", "arguments": [1]}`, `{"name": "search", "arguments": [1]}`, nil},
		{"text after a call object", `{"name": "search", "arguments": {}} and more`, `{"name": "search", "arguments": {}} and more`, nil},
		{"broken hermes", "<tool_call>{\"name\": \"search\", \"arg", "<tool_call>{\"name\": \"search\", \"arg", nil},
		{"plain text", "It is sunny in Paris.", "It is sunny in Paris.", nil},
		{"json fence", "```json\n{\"name\": \"search\", \"arguments\": {\"q\": \"f\"}}\n```\n", "", []string{`search {"q":"f"}`}},
		{"json fence, not a call", "```json\n{\"a\": 1}\n```", "```json\n{\"a\": 1}\n```", nil},
		{"code fence", "```go\nfunc f() {}\n```", "```go\nfunc f() {}\n```", nil},
	} {
		content, calls := ParseCalls(c.in, toolNames)
		if content != c.content {
			t.Errorf("%s: content %q, want %q", c.name, content, c.content)
		}
		if got := callStrings(calls); strings.Join(got, "|") != strings.Join(c.calls, "|") {
			t.Errorf("%s: calls %q, want %q", c.name, got, c.calls)
		}
	}
}

func callStrings(calls []Call) []string {
	var s []string
	for _, c := range calls {
		s = append(s, c.Name+" "+string(c.Arguments))
	}
	return s
}

// TestToolStream: fed piece by piece (each split of the text, at every byte and at
// every rune), a ToolStream releases exactly the text that is not calls, never any of
// a call, and Finish gives ParseCalls' calls.
func TestToolStream(t *testing.T) {
	for _, in := range []string{
		"It is sunny [really] in Paris {see} <b>.",
		"Let me look.\n<tool_call>{\"name\":\"search\",\"arguments\":{\"q\":\"a\"}}</tool_call>",
		`{"name": "get_weather", "parameters": {"city": "Oslo"}}`,
		`{"answer": 42}`,
		`[TOOL_CALLS] [{"name": "search", "arguments": {"q": "c"}}]`,
		"[1] a list",
		"```json\n{\"name\": \"search\", \"arguments\": {}}\n```",
		"```go\nfunc f() {}\n```",
		"``` not json",
		"  <tool_call>{\"name\":\"nope\",\"arguments\":{}}</tool_call>",
		"Text <tool then more",
		"Thinking done. <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>search\n```json\n{\"q\": \"e\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
	} {
		wantContent, wantCalls := ParseCalls(in, toolNames)
		for _, step := range []int{1, 2, 3, 7, len(in)} {
			ts := NewToolStream(toolNames)
			var out strings.Builder
			for i := 0; i < len(in); i += step {
				out.WriteString(ts.Push(in[i:min(i+step, len(in))]))
			}
			rest, calls := ts.Finish()
			got := out.String() + rest
			if wantCalls == nil && got != in {
				t.Errorf("%q in steps of %d: released %q", in, step, got)
			}
			if wantCalls != nil && strings.TrimRight(got, " \t\r\n") != wantContent {
				t.Errorf("%q in steps of %d: released %q, want %q", in, step, got, wantContent)
			}
			if strings.Join(callStrings(calls), "|") != strings.Join(callStrings(wantCalls), "|") {
				t.Errorf("%q in steps of %d: calls %q, want %q", in, step, callStrings(calls), callStrings(wantCalls))
			}
		}
		// rune by rune
		ts := NewToolStream(toolNames)
		var out strings.Builder
		for s := in; s != ""; {
			_, n := utf8.DecodeRuneInString(s)
			out.WriteString(ts.Push(s[:n]))
			s = s[n:]
		}
		rest, _ := ts.Finish()
		if wantCalls == nil && out.String()+rest != in {
			t.Errorf("%q rune by rune: released %q", in, out.String()+rest)
		}
	}
}

// FuzzParseCalls: no input panics, and calls are only of declared names with object
// arguments.
func FuzzParseCalls(f *testing.F) {
	f.Add(`<tool_call>{"name":"search","arguments":{}}</tool_call>`)
	f.Add(`{"name": "get_weather", "parameters": {"city": "Oslo"}}; {"name": "search"}`)
	f.Add("<｜tool▁call▁begin｜>function<｜tool▁sep｜>search\n{}")
	f.Fuzz(func(t *testing.T, s string) {
		_, calls := ParseCalls(s, toolNames)
		for _, c := range calls {
			if c.Name != "get_weather" && c.Name != "search" || len(c.Arguments) == 0 || c.Arguments[0] != '{' {
				t.Fatalf("call %+v from %q", c, s)
			}
		}
		// Streamed in pieces of 3 bytes, the text released and the calls are ParseCalls'.
		content, want := ParseCalls(s, toolNames)
		ts := NewToolStream(toolNames)
		var out strings.Builder
		for i := 0; i < len(s); i += 3 {
			out.WriteString(ts.Push(s[i:min(i+3, len(s))]))
		}
		rest, got := ts.Finish()
		text := out.String() + rest
		if want == nil && (got != nil || text != s) {
			t.Fatalf("%q: streamed %q with calls %v, want the text whole", s, text, callStrings(got))
		}
		if want != nil && (strings.TrimRight(text, " \t\r\n") != content || strings.Join(callStrings(got), "|") != strings.Join(callStrings(want), "|")) {
			t.Fatalf("%q: streamed %q and %v, want %q and %v", s, text, callStrings(got), content, callStrings(want))
		}
	})
}
