package ollama

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzRequests posts arbitrary bodies to /api/chat and /api/generate: never a 5xx; a
// 200 is JSON (one object, or one per line when streaming) and an error is Ollama's
// {"error": "..."} shape.
func FuzzRequests(f *testing.F) {
	for _, s := range []string{
		`{"model":"stories260K","messages":[{"role":"user","content":"Once"}],"options":{"num_predict":3}}`,
		`{"model":"stories260K","messages":[{"role":"user","content":"Once"}],"stream":false,"options":{"num_predict":2,"temperature":-1}}`,
		`{"model":"stories260K","prompt":"Once","stream":false,"format":"json","options":{"num_predict":2}}`,
		`{"model":"stories260K","prompt":"x","options":{"num_ctx":1e12,"top_k":-5,"seed":"a"}}`,
		`{"model":"stories260K","prompt":"def f(","suffix":"):","stream":false,"options":{"num_predict":2}}`,
		`{"model":"stories260K","messages":[{"role":"user","content":"Once"}],"format":"json","options":{"num_predict":3}}`,
		`{"model":"stories260K","messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":{"a":1}}}]},{"role":"tool","tool_name":"f","content":"2"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"options":{"num_predict":2}}`,
		`{"model":"stories260K","messages":[{"role":"user","content":"Once"},{"role":"assistant","content":" upon"}],"options":{"num_predict":2}}`,
		`{"model":"stories260K","prompt":"","system":"x","keep_alive":0}`,
		`{"model":"stories260K","prompt":"x","raw":true,"context":[1],"think":"low"}`,
		`{"model":"nope","prompt":"x"}`, `{"messages":7}`, `[]`, `{`, ``,
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	h := New(newTestBackend(f), Options{})
	f.Fuzz(func(t *testing.T, body string, generate bool) {
		path := "/api/chat"
		if generate {
			path = "/api/generate"
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", path, strings.NewReader(body)))
		out := rec.Body.Bytes()
		if rec.Code >= 500 {
			t.Fatalf("%s %q: %d %s", path, body, rec.Code, out)
		}
		if rec.Code != 200 {
			var e struct{ Error string }
			if err := json.Unmarshal(out, &e); err != nil || e.Error == "" {
				t.Fatalf("%s %q: %d without an error: %s", path, body, rec.Code, out)
			}
			return
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var v map[string]any
			if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
				t.Fatalf("%s %q: a line that is not JSON: %q", path, body, sc.Text())
			}
		}
	})
}
