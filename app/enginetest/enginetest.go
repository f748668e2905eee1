// Package enginetest puts the real engine, on the bundled stories260K, behind the
// methods the API packages (openai, ollama) need from a loaded model, for their tests.
package enginetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"ember/inference/backend/ref"
	"ember/inference/engine"
	"ember/inference/gguf"
	"ember/inference/model/archs"
	"ember/inference/prompt"
	"ember/inference/tokenizer"
)

// Backend is the engine on a model file. Its Generate forwards the engine's events,
// optionally slowed down (so streams last long enough to be interrupted).
type Backend struct {
	Eng   *engine.Engine
	Tok   *tokenizer.Tokenizer
	Tmpl  *prompt.Template  // nil: Render joins the contents with newlines
	Delay time.Duration     // slept before forwarding each token
	Ended chan engine.Event // gets each generation's final event when not nil
	// CloseOnFirst closes the engine as a generation's first event arrives, as unloading
	// the model (or stopping the app) does under a running request: the generation ends
	// with FinishCancelled and engine.ErrClosed.
	CloseOnFirst bool
}

// New loads path on the reference backend and starts an engine with opt; everything is
// closed when t ends.
func New(t testing.TB, path string, opt engine.Options) *Backend {
	t.Helper()
	f, err := gguf.Open(path)
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
	e, err := engine.New(m, tok, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(); m.Close(); f.Close() })
	return &Backend{Eng: e, Tok: tok}
}

// Generate starts a generation; events stop being forwarded once ctx ends, but the
// engine's are drained so Ended still gets the final one.
func (b *Backend) Generate(ctx context.Context, req engine.Request) (<-chan engine.Event, error) {
	in, err := b.Eng.Generate(ctx, req)
	if err != nil {
		return nil, err
	}
	out := make(chan engine.Event)
	go func() {
		defer close(out)
		forward, first := true, true
		for ev := range in {
			if first && b.CloseOnFirst {
				b.Eng.Close()
			}
			first = false
			if ev.Done && b.Ended != nil {
				b.Ended <- ev
			}
			if !ev.Done && b.Delay > 0 {
				time.Sleep(b.Delay)
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

// ModelName is the bundled model's name.
func (b *Backend) ModelName() string { return "stories260K" }

// ContextSize is the engine's context size.
func (b *Backend) ContextSize() int { return b.Eng.ContextSize() }

// TokenText is token id's text.
func (b *Backend) TokenText(id int32) string { return b.Tok.Piece(id) }

// Infill reports whether the vocabulary has fill-in-the-middle tokens.
func (b *Backend) Infill() bool { return b.Tok.HasInfill() }

// Render renders msgs with Tmpl, or joins their non-empty contents with newlines without
// one, as the app's server.Model does.
func (b *Backend) Render(ctx context.Context, msgs []prompt.Message, tools []any, gen bool) (string, error) {
	if len(tools) > 0 && (b.Tmpl == nil || !b.Tmpl.UsesTools()) {
		msgs = prompt.WithToolInstructions(msgs, tools)
	}
	if b.Tmpl != nil {
		return b.Tmpl.Render(ctx, msgs, prompt.Options{AddGenerationPrompt: gen, Tools: tools})
	}
	parts := make([]string, 0, len(msgs))
	for _, m := range msgs {
		if m.Content != "" { // as server.Model.Render joins them
			parts = append(parts, m.Content)
		}
	}
	return strings.Join(parts, "\n"), nil
}
