package reply

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Call is one tool call found in a reply: a declared tool's name and its arguments, a
// JSON object.
type Call struct {
	Name      string
	Arguments json.RawMessage
}

// The openers of the tool-call forms chat models are trained to write:
//   - Qwen2.5, Hermes and most fine-tunes: <tool_call>{"name": ..., "arguments": {...}}</tool_call>,
//     one block a call;
//   - Llama 3.1-3.3: the whole reply one JSON object {"name": ..., "parameters": {...}}
//     (after <|python_tag|> in some), several separated by ";";
//   - Mistral: [TOOL_CALLS] [{"name": ..., "arguments": {...}}, ...];
//   - DeepSeek V2/V3 and the R1 distills: <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME
//     then the arguments in a ```json fence, <｜tool▁call▁end｜> ... <｜tool▁calls▁end｜>;
//   - and a reply that is one JSON object of a declared tool's name and its arguments,
//     what a model is asked for when no template of its own lists tools (and what
//     tool_choice "required" constrains the reply to).
const (
	hermesOpen   = "<tool_call>"
	hermesClose  = "</tool_call>"
	pythonTag    = "<|python_tag|>"
	mistralOpen  = "[TOOL_CALLS]"
	dsCallsOpen  = "<｜tool▁calls▁begin｜>"
	dsCallOpen   = "<｜tool▁call▁begin｜>"
	dsCallSep    = "<｜tool▁sep｜>"
	dsCallClose  = "<｜tool▁call▁end｜>"
	dsCallsClose = "<｜tool▁calls▁end｜>"
)

// jsonFence opens a Markdown code block of JSON: small models asked for a bare call
// object often write it in one.
const jsonFence = "```json"

// midOpeners may start tool calls after some text; a reply may start with any opener,
// with '{' or with a ```json fence.
var midOpeners = []string{hermesOpen, mistralOpen, dsCallsOpen, dsCallOpen, pythonTag}

// ParseCalls finds the tool calls in a finished reply's content, of the tools named
// (other names do not count). It returns the content before the calls (trimmed of
// trailing space) and the calls; with no calls, content is returned unchanged.
func ParseCalls(content string, names []string) (string, []Call) {
	known := make(map[string]bool, len(names))
	for _, n := range names {
		known[n] = true
	}
	lead := strings.TrimLeft(content, " \t\r\n")
	if strings.HasPrefix(lead, "{") || strings.HasPrefix(lead, "[") {
		if calls := jsonCalls(lead, known); calls != nil {
			return "", calls
		}
	}
	if body, ok := strings.CutPrefix(lead, jsonFence); ok { // the object in a ```json fence
		if body, ok = strings.CutSuffix(strings.TrimRight(body, " \t\r\n"), "```"); ok {
			if calls := jsonCalls(body, known); calls != nil {
				return "", calls
			}
		}
	}
	at := -1
	for _, o := range midOpeners {
		if i := strings.Index(content, o); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	if at < 0 {
		return content, nil
	}
	var calls []Call
	rest := content[at:]
	switch {
	case strings.HasPrefix(rest, hermesOpen):
		calls = hermesCalls(rest, known)
	case strings.HasPrefix(rest, mistralOpen):
		calls = jsonCalls(strings.TrimSpace(strings.TrimPrefix(rest, mistralOpen)), known)
	case strings.HasPrefix(rest, pythonTag):
		calls = jsonCalls(strings.TrimSpace(strings.TrimPrefix(rest, pythonTag)), known)
	default:
		calls = deepseekCalls(rest, known)
	}
	if calls == nil {
		return content, nil
	}
	return strings.TrimRight(content[:at], " \t\r\n"), calls
}

// callOf reads {"name": N, "arguments"|"parameters": {...}} (also OpenAI's
// {"type": "function", "function": {...}} and arguments given as a JSON string).
func callOf(v map[string]json.RawMessage, known map[string]bool) (Call, bool) {
	if f, ok := v["function"]; ok {
		var inner map[string]json.RawMessage
		if json.Unmarshal(f, &inner) == nil {
			return callOf(inner, known)
		}
	}
	var name string
	if json.Unmarshal(v["name"], &name) != nil || !known[name] {
		return Call{}, false
	}
	args, ok := v["arguments"]
	if !ok {
		args, ok = v["parameters"]
	}
	if !ok {
		return Call{Name: name, Arguments: json.RawMessage("{}")}, true
	}
	var s string
	if json.Unmarshal(args, &s) == nil { // arguments as a JSON string
		args = json.RawMessage(s)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil {
		return Call{}, false
	}
	return Call{Name: name, Arguments: compact(args)}, true
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// jsonCalls reads text that is nothing but calls: one object, an array of them, or
// objects separated by ";" (Llama). Any other text, or a name not declared, and it is
// no call (nil).
func jsonCalls(text string, known map[string]bool) []Call {
	text = strings.TrimSpace(text)
	var arr []map[string]json.RawMessage
	if strings.HasPrefix(text, "[") {
		if json.Unmarshal([]byte(text), &arr) != nil || len(arr) == 0 {
			return nil
		}
	} else {
		dec := json.NewDecoder(strings.NewReader(text))
		for {
			var v map[string]json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return nil
			}
			arr = append(arr, v)
			rest := strings.TrimSpace(text[dec.InputOffset():])
			if rest == "" {
				break
			}
			if !strings.HasPrefix(rest, ";") {
				return nil
			}
			text = strings.TrimSpace(rest[1:])
			if text == "" {
				break
			}
			dec = json.NewDecoder(strings.NewReader(text))
		}
	}
	calls := make([]Call, 0, len(arr))
	for _, v := range arr {
		c, ok := callOf(v, known)
		if !ok {
			return nil
		}
		calls = append(calls, c)
	}
	return calls
}

// hermesCalls reads <tool_call>...</tool_call> blocks (the last may lack its close: the
// reply ended there); text between blocks other than space is not a call form.
func hermesCalls(text string, known map[string]bool) []Call {
	var calls []Call
	for text = strings.TrimSpace(text); text != ""; text = strings.TrimSpace(text) {
		if !strings.HasPrefix(text, hermesOpen) {
			return nil
		}
		body := text[len(hermesOpen):]
		end := strings.Index(body, hermesClose)
		if end < 0 {
			end, text = len(body), ""
		} else {
			text = body[end+len(hermesClose):]
		}
		cs := jsonCalls(body[:end], known)
		if len(cs) == 0 {
			return nil
		}
		calls = append(calls, cs...)
	}
	return calls
}

// deepseekCalls reads DeepSeek's call blocks: function<｜tool▁sep｜>NAME, then the
// arguments (in a ```json fence or bare), each in <｜tool▁call▁begin｜> ...
// <｜tool▁call▁end｜>.
func deepseekCalls(text string, known map[string]bool) []Call {
	text = strings.TrimPrefix(strings.TrimSpace(text), dsCallsOpen)
	if i := strings.Index(text, dsCallsClose); i >= 0 {
		if strings.TrimSpace(text[i+len(dsCallsClose):]) != "" {
			return nil
		}
		text = text[:i]
	}
	var calls []Call
	for text = strings.TrimSpace(text); text != ""; text = strings.TrimSpace(text) {
		if !strings.HasPrefix(text, dsCallOpen) {
			return nil
		}
		body := text[len(dsCallOpen):]
		end := strings.Index(body, dsCallClose)
		if end < 0 {
			end, text = len(body), ""
		} else {
			text = body[end+len(dsCallClose):]
		}
		body = body[:end]
		sep := strings.Index(body, dsCallSep)
		if sep < 0 {
			return nil
		}
		nameArgs := body[sep+len(dsCallSep):]
		nl := strings.IndexByte(nameArgs, '\n')
		if nl < 0 {
			return nil
		}
		name, args := strings.TrimSpace(nameArgs[:nl]), strings.TrimSpace(nameArgs[nl+1:])
		args = strings.TrimPrefix(args, "```json")
		args = strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(args, "```")), "```")
		c, ok := callOf(map[string]json.RawMessage{"name": quoteJSON(name), "arguments": json.RawMessage(strings.TrimSpace(args))}, known)
		if !ok {
			return nil
		}
		calls = append(calls, c)
	}
	return calls
}

func quoteJSON(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// ToolStream holds back, from a streamed reply's content, whatever may be tool calls:
// a reply that starts with an opener or with '{' or '[' (held whole), and from an
// opener later in the text on; and text that ends in the start of an opener, until the
// next piece says whether it is one. Finish parses what it held.
type ToolStream struct {
	names   []string
	held    string
	started bool // some content other than space was released
	calls   bool // from an opener on: everything is held
}

// NewToolStream returns a ToolStream for calls of the tools named.
func NewToolStream(names []string) *ToolStream { return &ToolStream{names: names} }

// Push takes the next content and returns what of it may be released as text.
func (t *ToolStream) Push(c string) string {
	t.held += c
	if t.calls {
		return ""
	}
	if !t.started {
		s := strings.TrimLeft(t.held, " \t\r\n")
		if s == "" {
			return ""
		}
		call, undecided := startsCall(s)
		if undecided {
			return ""
		}
		if call {
			t.calls = true
			return ""
		}
		t.started = true
	}
	at := -1
	for _, o := range midOpeners {
		if i := strings.Index(t.held, o); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	if at >= 0 {
		out := t.held[:at]
		t.held, t.calls = t.held[at:], true
		return out
	}
	keep := 0 // the longest end of held that an opener starts with
	for _, o := range midOpeners {
		for n := min(len(o)-1, len(t.held)); n > keep; n-- {
			if strings.HasSuffix(t.held, o[:n]) {
				keep = n
				break
			}
		}
	}
	out := t.held[:len(t.held)-keep]
	t.held = t.held[len(t.held)-keep:]
	return out
}

// Finish ends the reply: the calls in what was held, and the held text that is not
// calls (all of it when there are none).
func (t *ToolStream) Finish() (string, []Call) {
	held := t.held
	t.held = ""
	if !t.calls {
		return held, nil
	}
	return ParseCalls(held, t.names)
}

// startsCall says whether a reply's content s (no leading space) opens tool calls: an
// opener, '{', or '[' then '{' (an array of calls); undecided while s could still
// become one.
func startsCall(s string) (call, undecided bool) {
	if strings.HasPrefix(s, "{") || strings.HasPrefix(s, jsonFence) {
		return true, false
	}
	if isPrefixOf(s, jsonFence) {
		return false, true
	}
	if strings.HasPrefix(s, "[") && !strings.HasPrefix(s, mistralOpen) && !isPrefixOf(s, mistralOpen) {
		r := strings.TrimLeft(s[1:], " \t\r\n")
		if r != "" {
			return r[0] == '{', false
		}
		return false, true
	}
	for _, o := range midOpeners {
		if strings.HasPrefix(s, o) {
			return true, false
		}
		if isPrefixOf(s, o) {
			undecided = true
		}
	}
	return false, undecided
}

// isPrefixOf reports whether s is a proper prefix of o.
func isPrefixOf(s, o string) bool { return len(s) < len(o) && strings.HasPrefix(o, s) }
