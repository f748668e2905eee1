package engine

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/cpu"
	"ember/inference/backend/ref"
	"ember/inference/gguf"
	"ember/inference/model/archs"
	"ember/inference/sample"
	"ember/inference/tokenizer"
)

// plainBackend hides every optional op of the backend it wraps, ArgMax among them: the
// engine reads back every logits row and samples it on the host.
type plainBackend struct{ backend.Backend }

// countingBackend is plainBackend with ArgMax passed through; it counts ArgMax calls
// and ReadF32 calls.
type countingBackend struct {
	backend.Backend
	argmax, reads atomic.Int64
}

func (c *countingBackend) ArgMax(ctx context.Context, src backend.Tensor, dst []int32) error {
	c.argmax.Add(1)
	return c.Backend.(backend.ArgMaxer).ArgMax(ctx, src, dst)
}

func (c *countingBackend) ReadF32(ctx context.Context, src backend.Tensor, dst []float32) error {
	c.reads.Add(1)
	return c.Backend.ReadF32(ctx, src, dst)
}

// newStoriesOn is newStoriesOpt on backend be.
func newStoriesOn(t *testing.T, be backend.Backend, opt Options) *Engine {
	t.Helper()
	return newEngineOn(t, storiesPath, be, opt)
}

// newEngineOn is an engine with opt over the model file at path on be, closed when t
// ends.
func newEngineOn(t *testing.T, path string, be backend.Backend, opt Options) *Engine {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := archs.Load(f, be)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(m, tok, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(); m.Close(); f.Close() })
	return e
}

// hostBackends are the backends the engine tests run on, each made fresh. tol is how far
// apart logprobs of two runs of the same requests may be: the order in which concurrent
// requests arrive changes how steps batch them, and the cpu backend's kernels round
// differently for other batch widths (ref does not).
var hostBackends = []struct {
	name string
	tol  float64
	make func(t *testing.T) backend.Backend
}{
	{"ref", 0, func(*testing.T) backend.Backend { return ref.New() }},
	{"cpu", 1e-5, func(t *testing.T) backend.Backend {
		b, err := cpu.New(cpu.Options{Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}},
}

// runAll starts every request at once on e and waits for all of them.
func runAll(t *testing.T, e *Engine, reqs []Request) []result {
	t.Helper()
	out := make([]result, len(reqs))
	var wg sync.WaitGroup
	for i, r := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = generate(t, e, r)
		}()
	}
	wg.Wait()
	return out
}

// TestGreedyArgMaxEqualsLogits: greedy requests batched together give the same tokens
// when the backend finds the argmaxes (only ids read back, no logits row) as when every
// logits row is read back and sampled on the host.
func TestGreedyArgMaxEqualsLogits(t *testing.T) {
	var reqs []Request
	for i, p := range prompts {
		r := Request{Prompt: p, MaxTokens: 24, IgnoreEOS: true}
		switch i {
		case 1:
			r.Sampling = sample.Params{TopK: 3, TopP: 0.5, Seed: 9} // greedy all the same
		case 2:
			r.Sampling.Penalties.Repeat = 1 // off
		case 3:
			r.MaxTokens, r.IgnoreEOS = 60, false
		}
		reqs = append(reqs, r)
	}
	opt := Options{ContextSize: 256, PrefillChunk: 16, BlockSize: 4, Parallel: 6, checkIntegrity: true}
	for _, hb := range hostBackends {
		t.Run(hb.name, func(t *testing.T) {
			plain := newStoriesOn(t, plainBackend{hb.make(t)}, opt)
			want := runAll(t, plain, reqs)
			cb := &countingBackend{Backend: hb.make(t)}
			got := runAll(t, newStoriesOn(t, cb, opt), reqs)
			for i := range reqs {
				sameResult(t, fmt.Sprintf("request %d", i), got[i], want[i], 0)
				if got[i].last.Finish != want[i].last.Finish || got[i].last.Usage.CompletionTokens != want[i].last.Usage.CompletionTokens {
					t.Fatalf("request %d: finish %q after %d tokens, want %q after %d", i, got[i].last.Finish,
						got[i].last.Usage.CompletionTokens, want[i].last.Finish, want[i].last.Usage.CompletionTokens)
				}
			}
			if cb.argmax.Load() == 0 || cb.reads.Load() != 0 {
				t.Fatalf("greedy steps took %d argmaxes and read logits %d times; want only argmaxes", cb.argmax.Load(), cb.reads.Load())
			}
		})
	}
}

// TestMixedSamplingBatch: greedy, temperature, penalized and logprob requests batched
// together give the same tokens and logprobs with the rows sampled in parallel (and the
// backend's ArgMax available) as sampled one after another on the host; the greedy ones
// also equal their runs alone.
func TestMixedSamplingBatch(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 4 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4)) // several sampling goroutines at once
	}
	reqs := []Request{
		{Prompt: prompts[0], MaxTokens: 24, IgnoreEOS: true},
		{Prompt: prompts[1], MaxTokens: 24, IgnoreEOS: true, Sampling: sample.Params{Temperature: 0.9, Seed: 1}},
		{Prompt: prompts[2], MaxTokens: 24, IgnoreEOS: true, Sampling: sample.Params{Temperature: 1, TopK: 20, Seed: 2}},
		{Prompt: prompts[3], MaxTokens: 24, IgnoreEOS: true, Sampling: sample.Params{Penalties: sample.Penalties{Repeat: 1.3}}},
		{Prompt: prompts[4], MaxTokens: 24, IgnoreEOS: true, Logprobs: true, TopLogprobs: 3},
		{Prompt: prompts[5], MaxTokens: 24, IgnoreEOS: true, Logprobs: true,
			Sampling: sample.Params{Temperature: 0.7, TopP: 0.9, Seed: 3, Penalties: sample.Penalties{Presence: 0.5, Frequency: 0.2}}},
		{Prompt: prompts[2], MaxTokens: 12, IgnoreEOS: true}, // ends early: later steps have fewer rows
	}
	opt := Options{ContextSize: 256, PrefillChunk: 16, BlockSize: 4, Parallel: 7, checkIntegrity: true}
	for _, hb := range hostBackends {
		t.Run(hb.name, func(t *testing.T) {
			serial := opt
			serial.sampleParallel = -1
			want := runAll(t, newStoriesOn(t, plainBackend{hb.make(t)}, serial), reqs)
			parallel := opt
			parallel.sampleParallel = 2
			cb := &countingBackend{Backend: hb.make(t)}
			got := runAll(t, newStoriesOn(t, cb, parallel), reqs)
			for i := range reqs {
				sameResult(t, fmt.Sprintf("request %d", i), got[i], want[i], hb.tol)
				if len(got[i].ids) != reqs[i].MaxTokens || len(got[i].lps) != len(want[i].lps) {
					t.Fatalf("request %d: %d tokens and %d logprobs, want %d and %d", i,
						len(got[i].ids), len(got[i].lps), reqs[i].MaxTokens, len(want[i].lps))
				}
			}
			if cb.reads.Load() == 0 {
				t.Fatal("mixed steps never read the logits back")
			}
			// The sampled requests differ from greedy decoding (else this test proves little).
			alone := generate(t, newStoriesOn(t, hb.make(t), Options{ContextSize: 256, Parallel: 1}),
				Request{Prompt: prompts[1], MaxTokens: 24, IgnoreEOS: true})
			if equal(alone.ids, got[1].ids) {
				t.Fatal("temperature 0.9 drew the greedy tokens")
			}
			first := generate(t, newStoriesOn(t, hb.make(t), Options{ContextSize: 256, Parallel: 1}), reqs[0])
			sameResult(t, "greedy request alone", first, got[0], hb.tol)
		})
	}
}
