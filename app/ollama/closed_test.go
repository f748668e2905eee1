package ollama

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestEngineClosedMidGeneration: a generation the engine ends itself (closing) while
// the client still waits is answered with a 503 and Ollama's {"error"} body, or,
// streamed, with a last {"error"} line; never an empty 200 or a stream cut without a
// word.
func TestEngineClosedMidGeneration(t *testing.T) {
	const opts = `"options":{"num_predict":800,"seed":1}`
	chat := `{"model":"stories260K","messages":[{"role":"user","content":"Once upon a time"}],`
	gen := `{"model":"stories260K","prompt":"Once upon a time",`
	for _, c := range []struct {
		path, body string
		stream     bool
	}{
		{"/api/chat", chat + `"stream":false,` + opts + `}`, false},
		{"/api/chat", chat + `"stream":true,` + opts + `}`, true},
		{"/api/generate", gen + `"stream":false,` + opts + `}`, false},
		{"/api/generate", gen + `"stream":true,` + opts + `}`, true},
	} {
		b := newTestBackend(t)
		b.CloseOnFirst = true
		h := New(b, Options{})
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", c.path, strings.NewReader(c.body)))
		body := strings.TrimSpace(rec.Body.String())
		var e struct {
			Error string `json:"error"`
		}
		if !c.stream {
			if rec.Code != http.StatusServiceUnavailable || json.Unmarshal([]byte(body), &e) != nil || e.Error == "" {
				t.Errorf("%s %s: %d %q", c.path, c.body, rec.Code, body)
			}
			continue
		}
		lines := strings.Split(body, "\n")
		if rec.Code != http.StatusOK || json.Unmarshal([]byte(lines[len(lines)-1]), &e) != nil || e.Error == "" {
			t.Errorf("%s %s: %d, last line of %d %q", c.path, c.body, rec.Code, len(lines), lines[len(lines)-1])
		}
	}
}
