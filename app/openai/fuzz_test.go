package openai

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzRequests posts arbitrary bodies to the completion routes: the answer is never a
// 5xx, a 200 is a JSON object or an event stream ending in [DONE], and anything else is
// OpenAI's error shape.
func FuzzRequests(f *testing.F) {
	for _, s := range []string{
		`{"model":"stories260K","messages":[{"role":"user","content":"Once"}],"max_tokens":3}`,
		`{"model":"stories260K","messages":[{"role":"user","content":"Once"}],"max_tokens":3,"stream":true,"stream_options":{"include_usage":true}}`,
		`{"model":"stories260K","prompt":["a","b"],"max_tokens":2,"n":2,"logprobs":3,"echo":true}`,
		`{"model":"stories260K","messages":[],"max_tokens":-1}`,
		`{"model":"stories260K","messages":[{"role":"user","content":"x"}],"temperature":1e308,"top_p":-1}`,
		`{"model":"stories260K","messages":[{"role":"tool","content":null}],"stop":[""],"n":9}`,
		`{"model":"stories260K","prompt":"\xff\xfe","max_tokens":2,"response_format":{"type":"json_object"}}`,
		`{"model":"stories260K","messages":[{"role":"user","content":"Once"}],"max_tokens":4,"prediction":{"type":"content","content":"Once upon"},"response_format":{"type":"json_object"}}`,
		`{"model":"stories260K","prompt":"def f(","suffix":"):\n","max_tokens":3}`,
		`{"model":"stories260K","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"1"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"required","max_tokens":3}`,
		`{"model":"stories260K","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"tool_choice":{"type":"function","function":{"name":"f"}},"stream":true}`,
		`{"messages":"nope"}`, `[]`, `null`, `{`, ``,
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	b := newTestBackend(f)
	h := New(b, Options{})
	f.Fuzz(func(t *testing.T, body string, completions bool) {
		path := "/v1/chat/completions"
		if completions {
			path = "/v1/completions"
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", path, strings.NewReader(body)))
		out := rec.Body.Bytes()
		switch {
		case rec.Code >= 500:
			t.Fatalf("%s %q: %d %s", path, body, rec.Code, out)
		case rec.Code == 200 && strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream"):
			if !bytes.HasSuffix(out, []byte("data: [DONE]\n\n")) && !bytes.Contains(out, []byte(`"error"`)) {
				t.Fatalf("%s %q: a stream that neither ends with [DONE] nor reports an error: %s", path, body, out)
			}
		case rec.Code == 200:
			var v map[string]any
			if err := json.Unmarshal(out, &v); err != nil || v["choices"] == nil {
				t.Fatalf("%s %q: 200 with %s", path, body, out)
			}
		default:
			var e struct {
				Error struct{ Message, Type string }
			}
			if err := json.Unmarshal(out, &e); err != nil || e.Error.Message == "" || e.Error.Type == "" {
				t.Fatalf("%s %q: %d without an error object: %s", path, body, rec.Code, out)
			}
		}
	})
}

// FuzzSSE: every event the SSE writer sends is one "data: " line with the JSON of what
// it was given, whatever the text holds (newlines, invalid UTF-8, "data:" itself).
func FuzzSSE(f *testing.F) {
	for _, s := range []string{"", "hi", "a\nb\r\nc", "data: x\n\n", "\xff\x00", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rec := httptest.NewRecorder()
		w := newSSE(rec, time.Second)
		if err := w.data(map[string]string{"x": s}); err != nil {
			t.Fatal(err)
		}
		w.done()
		events := strings.Split(strings.TrimSuffix(rec.Body.String(), "\n\n"), "\n\n")
		if len(events) != 2 || events[1] != "data: [DONE]" {
			t.Fatalf("%q: events %q", s, events)
		}
		line, ok := strings.CutPrefix(events[0], "data: ")
		if !ok || strings.ContainsAny(line, "\r\n") {
			t.Fatalf("%q: event %q", s, events[0])
		}
		var v map[string]string
		if err := json.Unmarshal([]byte(line), &v); err != nil || v["x"] != validUTF8(s) {
			t.Fatalf("%q: payload %q (%v)", s, line, err)
		}
	})
}

// validUTF8 is s with every byte that is not part of a valid UTF-8 sequence replaced by
// U+FFFD, as encoding/json does.
func validUTF8(s string) string {
	var sb strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && n == 1 {
			sb.WriteRune(utf8.RuneError)
		} else {
			sb.WriteString(s[:n])
		}
		s = s[n:]
	}
	return sb.String()
}
