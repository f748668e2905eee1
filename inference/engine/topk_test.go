package engine

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"ember/inference/backend"
	"ember/inference/sample"
)

// topkBackend is countingBackend with TopK passed through too; it counts TopK calls.
type topkBackend struct {
	*countingBackend
	topk atomic.Int64
}

func (b *topkBackend) TopK(ctx context.Context, src backend.Tensor, k int, ids []int32, vals []float32) error {
	b.topk.Add(1)
	return b.Backend.(backend.TopKer).TopK(ctx, src, k, ids, vals)
}

// TestTopKEqualsLogits: seeded top-k requests (with top-p and min-p, several k, greedy
// ones among them) batched together give the same tokens when the backend finds each
// row's top-k candidates (only those read back) as when every logits row is read back
// and sampled on the host; with a request that needs whole rows among them (a top-k
// above backend.MaxTopK, a penalty) the rows are read back, with the same tokens.
func TestTopKEqualsLogits(t *testing.T) {
	topOnly := []Request{
		{Prompt: prompts[0], MaxTokens: 24, IgnoreEOS: true},
		{Prompt: prompts[1], MaxTokens: 24, IgnoreEOS: true, Sampling: sample.Params{Temperature: 0.9, TopK: 40, Seed: 1}},
		{Prompt: prompts[2], MaxTokens: 24, IgnoreEOS: true, Sampling: sample.Params{Temperature: 1.2, TopK: 5, TopP: 0.9, Seed: 2}},
		{Prompt: prompts[3], MaxTokens: 24, IgnoreEOS: true, Sampling: sample.Params{Temperature: 0.7, TopK: 100, MinP: 0.05, Seed: 3}},
		{Prompt: prompts[4], MaxTokens: 40, Sampling: sample.Params{Temperature: 1.5, TopK: backend.MaxTopK, Seed: 4}},
		{Prompt: prompts[5], MaxTokens: 12, IgnoreEOS: true, Sampling: sample.Params{Temperature: 1, TopK: 20, Seed: 5}},
		{Prompt: prompts[1], MaxTokens: 24, IgnoreEOS: true, Sampling: sample.Params{Temperature: 0.9, TopK: 40, Seed: 6,
			Penalties: sample.Penalties{Repeat: 1}}}, // off
	}
	wide := append(append([]Request(nil), topOnly...),
		Request{Prompt: prompts[2], MaxTokens: 16, IgnoreEOS: true, Sampling: sample.Params{Temperature: 1, TopK: backend.MaxTopK + 1, Seed: 7}})
	penalized := append(append([]Request(nil), topOnly...),
		Request{Prompt: prompts[3], MaxTokens: 16, IgnoreEOS: true, Sampling: sample.Params{Temperature: 1, TopK: 10, Seed: 8,
			Penalties: sample.Penalties{Presence: 0.5}}})
	opt := Options{ContextSize: 256, PrefillChunk: 16, BlockSize: 4, Parallel: 8, checkIntegrity: true}
	for _, hb := range hostBackends {
		for _, c := range []struct {
			name      string
			reqs      []Request
			wantReads bool
		}{{"top-k only", topOnly, false}, {"top-k above MaxTopK", wide, true}, {"penalty", penalized, true}} {
			t.Run(hb.name+"/"+c.name, func(t *testing.T) {
				want := runAll(t, newStoriesOn(t, plainBackend{hb.make(t)}, opt), c.reqs)
				tb := &topkBackend{countingBackend: &countingBackend{Backend: hb.make(t)}}
				got := runAll(t, newStoriesOn(t, tb, opt), c.reqs)
				for i := range c.reqs {
					sameResult(t, fmt.Sprintf("request %d (%+v)", i, c.reqs[i].Sampling), got[i], want[i], 0)
					if got[i].last.Finish != want[i].last.Finish || got[i].last.Usage.CompletionTokens != want[i].last.Usage.CompletionTokens {
						t.Fatalf("request %d: finish %q after %d tokens, want %q after %d", i, got[i].last.Finish,
							got[i].last.Usage.CompletionTokens, want[i].last.Finish, want[i].last.Usage.CompletionTokens)
					}
				}
				if tb.topk.Load() == 0 && !c.wantReads {
					t.Fatal("the top-k requests never took the TopK path")
				}
				if reads := tb.reads.Load(); (reads > 0) != c.wantReads {
					t.Fatalf("logits rows read back %d times (TopK %d times, ArgMax %d); want reads %v",
						reads, tb.topk.Load(), tb.argmax.Load(), c.wantReads)
				}
				if c.wantReads {
					return
				}
				// The sampled requests differ from greedy decoding (else this test proves little).
				greedy := c.reqs[1]
				greedy.Sampling = sample.Params{}
				alone := generate(t, newStoriesOn(t, hb.make(t), Options{ContextSize: 256, Parallel: 1}), greedy)
				if equal(alone.ids, got[1].ids) {
					t.Fatal("temperature 0.9, top-k 40 drew the greedy tokens")
				}
			})
		}
	}
}
