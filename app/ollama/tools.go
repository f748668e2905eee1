package ollama

import (
	"encoding/json"
	"net/http"
	"regexp"

	"github.com/ollama/ollama/api"

	"ember/app/reply"
	"ember/inference/prompt"
)

// Tool calling, as Ollama does it: the request's tools reach the chat template (or the
// system turn, for a template that takes none), and the calls in the reply, in the form
// the model's family writes them (reply.ParseCalls), come back as message.tool_calls;
// streamed, text that may be a call is held back and the calls come in one message
// before the last.

var toolName = regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,64}$`)

// toolDefs are the tools as JSON values for the template, and their names.
func toolDefs(tools api.Tools) ([]any, []string, *statusError) {
	if len(tools) == 0 {
		return nil, nil, nil
	}
	seen := map[string]bool{}
	var names []string
	for _, t := range tools {
		if t.Type != "function" {
			return nil, nil, &statusError{http.StatusBadRequest, "tools: type " + t.Type + " is not supported (only function)"}
		}
		if !toolName.MatchString(t.Function.Name) || seen[t.Function.Name] {
			return nil, nil, &statusError{http.StatusBadRequest, "tools: invalid or repeated function name " + t.Function.Name}
		}
		seen[t.Function.Name] = true
		names = append(names, t.Function.Name)
	}
	b, err := json.Marshal(tools)
	if err != nil {
		return nil, nil, &statusError{http.StatusBadRequest, "tools: " + err.Error()}
	}
	var defs []any
	if err := json.Unmarshal(b, &defs); err != nil {
		return nil, nil, &statusError{http.StatusBadRequest, "tools: " + err.Error()}
	}
	return defs, names, nil
}

// promptToolCalls are a request message's calls for the template.
func promptToolCalls(calls []api.ToolCall) []prompt.ToolCall {
	out := make([]prompt.ToolCall, 0, len(calls))
	for _, c := range calls {
		out = append(out, prompt.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments.String()})
	}
	return out
}

// ollamaCalls are a reply's calls in Ollama's shape.
func ollamaCalls(calls []reply.Call) []api.ToolCall {
	if len(calls) == 0 {
		return nil
	}
	out := make([]api.ToolCall, len(calls))
	for i, c := range calls {
		var args api.ToolCallFunctionArguments
		if err := args.UnmarshalJSON(c.Arguments); err != nil {
			args = api.NewToolCallFunctionArguments()
		}
		out[i] = api.ToolCall{Function: api.ToolCallFunction{Index: i, Name: c.Name, Arguments: args}}
	}
	return out
}
