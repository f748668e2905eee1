package openai

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestErrors: bad requests get OpenAI's error shape and status.
func TestErrors(t *testing.T) {
	h := New(newTestBackend(t), Options{MaxBodyBytes: 4096})
	long := strings.Repeat("Once upon a time there was a cat. ", 200)
	cases := []struct {
		name, method, path, body string
		status                   int
		param, code              string
	}{
		{"malformed", "POST", "/v1/chat/completions", `{"model":`, 400, "", "invalid_json"},
		{"not an object", "POST", "/v1/chat/completions", `[1,2]`, 400, "", "invalid_json"},
		{"empty body", "POST", "/v1/chat/completions", ``, 400, "", "invalid_json"},
		{"NaN literal", "POST", "/v1/chat/completions", chatBody(`,"temperature":NaN`), 400, "", "invalid_json"},
		{"temperature string", "POST", "/v1/chat/completions", chatBody(`,"temperature":"hot"`), 400, "temperature", "invalid_type"},
		{"temperature huge", "POST", "/v1/chat/completions", chatBody(`,"temperature":1e999`), 400, "temperature", "invalid_type"},
		{"temperature 3", "POST", "/v1/chat/completions", chatBody(`,"temperature":3`), 400, "temperature", "invalid_value"},
		{"temperature negative", "POST", "/v1/chat/completions", chatBody(`,"temperature":-0.5`), 400, "temperature", "invalid_value"},
		{"top_p 2", "POST", "/v1/chat/completions", chatBody(`,"top_p":2`), 400, "top_p", "invalid_value"},
		{"presence -3", "POST", "/v1/chat/completions", chatBody(`,"presence_penalty":-3`), 400, "presence_penalty", "invalid_value"},
		{"messages string", "POST", "/v1/chat/completions", `{"model":"stories260K","messages":"hi"}`, 400, "messages", "invalid_type"},
		{"content number", "POST", "/v1/chat/completions", `{"model":"stories260K","messages":[{"role":"user","content":5}]}`, 400, "messages.content", "invalid_type"},
		{"image part", "POST", "/v1/chat/completions", `{"model":"stories260K","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`, 400, "messages", "invalid_value"},
		{"missing messages", "POST", "/v1/chat/completions", `{"model":"stories260K"}`, 400, "messages", "missing_required_parameter"},
		{"empty messages", "POST", "/v1/chat/completions", `{"model":"stories260K","messages":[]}`, 400, "messages", "missing_required_parameter"},
		{"bad role", "POST", "/v1/chat/completions", `{"model":"stories260K","messages":[{"role":"wizard","content":"x"}]}`, 400, "messages", "invalid_value"},
		{"n 9", "POST", "/v1/chat/completions", chatBody(`,"n":9`), 400, "n", "invalid_value"},
		{"n 0", "POST", "/v1/chat/completions", chatBody(`,"n":0`), 400, "n", "invalid_value"},
		{"n float", "POST", "/v1/chat/completions", chatBody(`,"n":1.5`), 400, "n", "invalid_type"},
		{"max_tokens -1", "POST", "/v1/chat/completions", chatBody(`,"max_tokens":-1`), 400, "max_tokens", "invalid_value"},
		{"max_tokens 0", "POST", "/v1/chat/completions", chatBody(`,"max_tokens":0`), 400, "max_tokens", "invalid_value"},
		{"max_tokens huge", "POST", "/v1/chat/completions", chatBody(`,"max_tokens":1e12`), 400, "max_tokens", "invalid_type"},
		{"max_completion_tokens -5", "POST", "/v1/chat/completions", chatBody(`,"max_completion_tokens":-5`), 400, "max_completion_tokens", "invalid_value"},
		{"stop 5", "POST", "/v1/chat/completions", chatBody(`,"stop":["a","b","c","d","e"]`), 400, "stop", "invalid_value"},
		{"stop number", "POST", "/v1/chat/completions", chatBody(`,"stop":5`), 400, "stop", "invalid_type"},
		{"seed string", "POST", "/v1/chat/completions", chatBody(`,"seed":"x"`), 400, "seed", "invalid_type"},
		{"top_logprobs alone", "POST", "/v1/chat/completions", chatBody(`,"top_logprobs":2`), 400, "top_logprobs", "invalid_value"},
		{"top_logprobs 21", "POST", "/v1/chat/completions", chatBody(`,"logprobs":true,"top_logprobs":21`), 400, "top_logprobs", "invalid_value"},
		{"json_schema without schema", "POST", "/v1/chat/completions", chatBody(`,"response_format":{"type":"json_schema"}`), 400, "response_format.json_schema", "missing_required_parameter"},
		{"json_schema unsupported", "POST", "/v1/chat/completions", chatBody(`,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"anyOf":[]}}}`), 400, "response_format.json_schema.schema", "unsupported_value"},
		{"json_schema of no object", "POST", "/v1/chat/completions", chatBody(`,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"array"}}}`), 400, "response_format.json_schema.schema", "invalid_value"},
		{"prediction type", "POST", "/v1/chat/completions", chatBody(`,"prediction":{"type":"text","content":"a"}`), 400, "prediction.type", "invalid_value"},
		{"tool_choice required without tools", "POST", "/v1/chat/completions", chatBody(`,"tool_choice":"required"`), 400, "tool_choice", "invalid_value"},
		{"missing model", "POST", "/v1/chat/completions", `{` + story + `}`, 400, "model", "missing_required_parameter"},
		{"unknown model", "POST", "/v1/chat/completions", `{"model":"gpt-4",` + story + `}`, 404, "model", "model_not_found"},
		{"context too long", "POST", "/v1/chat/completions", `{"model":"stories260K","messages":[{"role":"user","content":"` + long[:4000] + `"}]}`, 400, "messages", "context_length_exceeded"},
		{"body too large", "POST", "/v1/chat/completions", `{"model":"stories260K","messages":[{"role":"user","content":"` + long + `"}]}`, 413, "", "request_too_large"},
		{"trailing ]", "POST", "/v1/chat/completions", chatBody(`,"max_tokens":1`) + `]`, 400, "", "invalid_json"},
		{"trailing }", "POST", "/v1/chat/completions", chatBody(`,"max_tokens":1`) + `}`, 400, "", "invalid_json"},
		{"two objects", "POST", "/v1/chat/completions", chatBody(`,"max_tokens":1`) + ` {}`, 400, "", "invalid_json"},
		{"refusal part without refusal", "POST", "/v1/chat/completions", `{"model":"stories260K","messages":[{"role":"assistant","content":[{"type":"refusal"}]}]}`, 400, "messages", "invalid_value"},
		{"completion context too long", "POST", "/v1/completions", `{"model":"stories260K","prompt":"` + long[:4000] + `"}`, 400, "prompt", "context_length_exceeded"},
		{"completion without prompt", "POST", "/v1/completions", `{"model":"stories260K"}`, 400, "prompt", "missing_required_parameter"},
		{"completion prompt object", "POST", "/v1/completions", `{"model":"stories260K","prompt":{"a":1}}`, 400, "prompt", "invalid_type"},
		{"completion token outside vocab", "POST", "/v1/completions", `{"model":"stories260K","prompt":[1,99999]}`, 400, "prompt", "invalid_value"},
		{"completion empty token prompt", "POST", "/v1/completions", `{"model":"stories260K","prompt":[[]]}`, 400, "prompt", "invalid_value"},
		{"logit_bias outside vocab", "POST", "/v1/chat/completions", chatBody(`,"logit_bias":{"99999":1}`), 400, "logit_bias", "invalid_value"},
		{"completion logit_bias outside vocab", "POST", "/v1/completions", `{"model":"stories260K","prompt":"a","logit_bias":{"99999":1}}`, 400, "logit_bias", "invalid_value"},
		{"completion empty tokens", "POST", "/v1/completions", `{"model":"stories260K","prompt":[]}`, 400, "prompt", "invalid_value"},
		{"completion suffix", "POST", "/v1/completions", `{"model":"stories260K","prompt":"a","suffix":"b"}`, 400, "suffix", "unsupported_value"},
		{"completion suffix after tokens", "POST", "/v1/completions", `{"model":"stories260K","prompt":[1,2],"suffix":"b"}`, 400, "suffix", "invalid_value"},
		{"GET chat", "GET", "/v1/chat/completions", ``, 405, "", "method_not_allowed"},
		{"POST models", "POST", "/v1/models", `{}`, 405, "", "method_not_allowed"},
		{"unknown route", "POST", "/v1/embeddings", `{}`, 404, "", "unknown_url"},
		{"unknown model card", "GET", "/v1/models/llama-70b", ``, 404, "model", "model_not_found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, strings.NewReader(c.body)))
			if rec.Code != c.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, c.status, rec.Body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if c.status == 405 && rec.Header().Get("Allow") != map[string]string{"GET": "POST", "POST": "GET"}[c.method] {
				t.Errorf("Allow %q", rec.Header().Get("Allow"))
			}
			// Exactly OpenAI's shape: {"error":{"message","type","param","code"}}.
			var raw map[string]map[string]any
			dec := json.NewDecoder(rec.Body)
			if err := dec.Decode(&raw); err != nil || len(raw) != 1 || raw["error"] == nil {
				t.Fatalf("body is not an OpenAI error: %v", err)
			}
			e := raw["error"]
			if len(e) != 4 {
				t.Errorf("error has keys %v", e)
			}
			msg, _ := e["message"].(string)
			typ, _ := e["type"].(string)
			if msg == "" || typ != "invalid_request_error" {
				t.Errorf("message %q type %q", msg, typ)
			}
			if want := nullable(c.param); e["param"] != want {
				t.Errorf("param %v, want %v", e["param"], want)
			}
			if c.code != "" && e["code"] != c.code {
				t.Errorf("code %v, want %s (%s)", e["code"], c.code, msg)
			}
		})
	}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
