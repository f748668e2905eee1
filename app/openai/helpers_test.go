package openai

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"ember/inference/backend/ref"
	"ember/inference/engine"
	"ember/inference/gguf"
	"ember/inference/model/archs"
	"ember/inference/prompt"
	"ember/inference/tokenizer"
)

const storiesPath = "../../assets/stories260K.gguf"

// testBackend is the real engine on stories260K behind the Backend interface. Its
// Generate forwards the engine's events, optionally slowed down (so streams last long
// enough to be interrupted), and records each generation's final event.
type testBackend struct {
	eng   *engine.Engine
	tok   *tokenizer.Tokenizer
	tmpl  *prompt.Template // nil: contents joined by newlines
	delay time.Duration

	mu     sync.Mutex
	finals []engine.Event
	ended  chan engine.Event // gets each final event when not nil
}

func newTestBackend(t testing.TB) *testBackend {
	t.Helper()
	f, err := gguf.Open(storiesPath)
	if err != nil {
		t.Fatal(err)
	}
	m, err := archs.Load(f, ref.New())
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(m, tok, engine.Options{ContextSize: 256, BlockSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(); m.Close(); f.Close() })
	return &testBackend{eng: e, tok: tok}
}

func (b *testBackend) Generate(ctx context.Context, req engine.Request) (<-chan engine.Event, error) {
	in, err := b.eng.Generate(ctx, req)
	if err != nil {
		return nil, err
	}
	out := make(chan engine.Event)
	go func() {
		defer close(out)
		forward := true
		for ev := range in {
			if ev.Done {
				b.mu.Lock()
				b.finals = append(b.finals, ev)
				b.mu.Unlock()
				if b.ended != nil {
					b.ended <- ev
				}
			}
			if !ev.Done && b.delay > 0 {
				time.Sleep(b.delay)
			}
			if forward {
				select {
				case out <- ev:
				case <-ctx.Done():
					forward = false
				}
			}
		}
	}()
	return out, nil
}

func (b *testBackend) ModelName() string         { return "stories260K" }
func (b *testBackend) ContextSize() int          { return b.eng.ContextSize() }
func (b *testBackend) TokenText(id int32) string { return b.tok.Piece(id) }

func (b *testBackend) Render(ctx context.Context, msgs []prompt.Message, gen bool) (string, error) {
	if b.tmpl != nil {
		return b.tmpl.Render(ctx, msgs, prompt.Options{AddGenerationPrompt: gen})
	}
	var parts []string
	for _, m := range msgs {
		parts = append(parts, m.Content)
	}
	return strings.Join(parts, "\n"), nil
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
