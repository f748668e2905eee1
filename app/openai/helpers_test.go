package openai

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"ember/app/enginetest"
	"ember/inference/engine"
)

const storiesPath = "../../assets/stories260K.gguf"

// testBackend is the real engine on stories260K (see enginetest).
type testBackend struct{ *enginetest.Backend }

func newTestBackend(t testing.TB) *testBackend {
	t.Helper()
	return &testBackend{enginetest.New(t, storiesPath, engine.Options{ContextSize: 256, BlockSize: 4})}
}

// newToolBackend has room for the tool instructions written into the prompt (the tiny
// model's vocabulary spells them in ~400 tokens).
func newToolBackend(t testing.TB) *testBackend {
	t.Helper()
	return &testBackend{enginetest.New(t, storiesPath, engine.Options{ContextSize: 1024, BlockSize: 16})}
}

// post sends a JSON body to the handler and returns the status and body.
func post(t *testing.T, h http.Handler, path, body string) (int, []byte) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
	return rec.Code, rec.Body.Bytes()
}

// postJSON decodes a 200 answer into v.
func postJSON(t *testing.T, h http.Handler, path, body string, v any) {
	t.Helper()
	code, b := post(t, h, path, body)
	if code != http.StatusOK {
		t.Fatalf("POST %s %s: %d %s", path, body, code, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("POST %s: %v in %s", path, err, b)
	}
}

// sseEvents splits a stream into its data payloads, checking the framing: every event
// is exactly "data: ...\n\n".
func sseEvents(t *testing.T, body []byte) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "data: ") {
			t.Fatalf("stream line %q is not data: ...", line)
		}
		out = append(out, strings.TrimPrefix(line, "data: "))
		if !sc.Scan() || sc.Text() != "" {
			t.Fatalf("event %q is not followed by a blank line", line)
		}
	}
	return out
}

// chunks parses the stream's JSON events; the last event must be [DONE].
func chunks[T any](t *testing.T, body []byte) []T {
	t.Helper()
	evs := sseEvents(t, body)
	if len(evs) == 0 || evs[len(evs)-1] != "[DONE]" {
		t.Fatalf("stream does not end with [DONE]: %q", body)
	}
	var out []T
	for _, e := range evs[:len(evs)-1] {
		var c T
		dec := json.NewDecoder(strings.NewReader(e))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			t.Fatalf("chunk %s: %v", e, err)
		}
		out = append(out, c)
	}
	return out
}

func readAll(t *testing.T, r io.Reader) []byte {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
