package openai

import (
	"bytes"
	"encoding/json"
	"regexp"

	"ember/app/reply"
	"ember/inference/jsonprefix"
	"ember/inference/prompt"
)

// Tool calling: "tools" are rendered by the model's chat template (or written into the
// system turn when the template takes none), and the reply's calls, in whatever form
// the model's family writes them (reply.ParseCalls), come back as message.tool_calls
// with finish_reason "tool_calls". tool_choice "none" leaves the tools out; "required"
// or a named function constrains the reply to one call object {"name", "arguments"},
// the name first and the arguments to that function's parameters schema when
// jsonprefix takes it (jsonprefix.Tagged).

type tool struct {
	Type     string       `json:"type"`
	Function toolFunction `json:"function"`
}

type toolFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// toolCall is a call in an assistant message, in requests and replies; Index is set in
// streamed deltas only.
type toolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function functionCall `json:"function"`
}

type functionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// toolName is OpenAI's rule for function names.
var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// toolSetup is what a request's tools and tool_choice ask of the reply.
type toolSetup struct {
	defs   []any    // for the template; nil: none (no tools, or tool_choice "none")
	names  []string // the tools a reply may call; nil: calls are not looked for
	schema *jsonprefix.Schema
	single bool // parallel_tool_calls false: the first call only
}

// limit keeps the calls a reply may make: the first only with parallel_tool_calls false.
func (ts toolSetup) limit(calls []reply.Call) []reply.Call {
	if ts.single && len(calls) > 1 {
		return calls[:1]
	}
	return calls
}

// validateTools reads tools and tool_choice.
func validateTools(tools []tool, choice json.RawMessage) (toolSetup, *apiError) {
	var ts toolSetup
	params := map[string]json.RawMessage{}
	for i, t := range tools {
		if t.Type != "function" {
			return ts, invalid("tools", "Invalid value for 'tools[%d].type': %q is not function.", i, t.Type).withCode("invalid_value")
		}
		if !toolName.MatchString(t.Function.Name) {
			return ts, invalid("tools", "Invalid 'tools[%d].function.name': %q does not match '^[a-zA-Z0-9_-]{1,64}$'.", i, t.Function.Name).withCode("invalid_value")
		}
		if _, dup := params[t.Function.Name]; dup {
			return ts, invalid("tools", "Duplicate function name %q in 'tools'.", t.Function.Name).withCode("invalid_value")
		}
		p := bytes.TrimSpace(t.Function.Parameters)
		if len(p) > 0 && !bytes.Equal(p, []byte("null")) && p[0] != '{' {
			return ts, invalid("tools", "Invalid 'tools[%d].function.parameters': a JSON schema object is expected.", i).withCode("invalid_value")
		}
		params[t.Function.Name] = p
		ts.names = append(ts.names, t.Function.Name)
	}
	mode, forced := "auto", ""
	if c := bytes.TrimSpace(choice); len(c) > 0 && !bytes.Equal(c, []byte("null")) {
		var s string
		var named struct {
			Type     string `json:"type"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		switch {
		case json.Unmarshal(c, &s) == nil:
			if s != "none" && s != "auto" && s != "required" {
				return ts, invalid("tool_choice", "Invalid value for 'tool_choice': %q is not one of none, auto, required.", s).withCode("invalid_value")
			}
			mode = s
		case json.Unmarshal(c, &named) == nil && named.Type == "function":
			if _, ok := params[named.Function.Name]; !ok {
				return ts, invalid("tool_choice", "Invalid value for 'tool_choice': no function named %q in 'tools'.", named.Function.Name).withCode("invalid_value")
			}
			mode, forced = "required", named.Function.Name
		default:
			return ts, invalid("tool_choice", "Invalid value for 'tool_choice': a string or {\"type\": \"function\", \"function\": {\"name\": ...}} is expected.").withCode("invalid_value")
		}
	}
	if len(tools) == 0 && (mode == "required" || forced != "") {
		return ts, invalid("tool_choice", "Invalid value for 'tool_choice': 'tool_choice' %s is only allowed when 'tools' are specified.", mode).withCode("invalid_value")
	}
	if len(tools) == 0 || mode == "none" {
		return toolSetup{}, nil
	}
	for _, t := range tools {
		ts.defs = append(ts.defs, toolDef(t))
	}
	if mode == "required" {
		names := ts.names
		if forced != "" {
			names = []string{forced}
		}
		ts.schema = callSchema(names, params)
	}
	return ts, nil
}

// toolDef is a tool as the templates read it (JSON values).
func toolDef(t tool) any {
	b, _ := json.Marshal(t)
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	dec.Decode(&v)
	return v
}

// callSchema is the schema of one call object of one of names: the name first, then
// the arguments, following that function's parameters where jsonprefix takes its schema
// (else any object).
func callSchema(names []string, params map[string]json.RawMessage) *jsonprefix.Schema {
	anyObject, _ := jsonprefix.Compile(map[string]any{"type": "object"})
	byName := make(map[string]*jsonprefix.Schema, len(names))
	for _, n := range names {
		byName[n] = anyObject
		var p any
		if json.Unmarshal(params[n], &p) == nil && p != nil {
			if s, err := jsonprefix.Compile(p); err == nil && s.Object() {
				byName[n] = s
			}
		}
	}
	return jsonprefix.Tagged("name", "arguments", byName)
}

// promptToolCalls are a request message's calls for the template.
func promptToolCalls(calls []toolCall) []prompt.ToolCall {
	out := make([]prompt.ToolCall, 0, len(calls))
	for _, c := range calls {
		out = append(out, prompt.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
	}
	return out
}

// outCalls are a reply's calls in OpenAI's shape, with fresh ids.
func outCalls(calls []reply.Call, indexed bool) []toolCall {
	out := make([]toolCall, len(calls))
	for i, c := range calls {
		out[i] = toolCall{ID: newID("call_"), Type: "function", Function: functionCall{Name: c.Name, Arguments: string(c.Arguments)}}
		if indexed {
			idx := i
			out[i].Index = &idx
		}
	}
	return out
}
