package ollama

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

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
	e, err := engine.New(m, tok, engine.Options{ContextSize: 256})
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

func (b *testBackend) Template() string {
	if b.tmpl == nil {
		return ""
	}
	return b.tmpl.Source()
}

func (b *testBackend) ModelDetails() api.ModelDetails {
	return api.ModelDetails{Format: "gguf", Family: "llama", Families: []string{"llama"}, ParameterSize: "292K", QuantizationLevel: "F32"}
}

func (b *testBackend) ModelInfo() map[string]any {
	return map[string]any{"general.architecture": "llama", "llama.context_length": 2048}
}

func (b *testBackend) ModelSize() int64      { return 1185376 }
func (b *testBackend) ModelDigest() string   { return "sha256:0123" }
func (b *testBackend) ModifiedAt() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
