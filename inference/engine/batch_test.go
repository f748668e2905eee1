package engine

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"ember/inference/backend/ref"
)

// newStoriesOpt is newStories with explicit options.
func newStoriesOpt(t *testing.T, opt Options) *Engine {
	t.Helper()
	return newStoriesOn(t, ref.New(), opt)
}

// result is one completion's tokens and per-token logprobs.
type result struct {
	ids  []int32
	lps  []float64
	last Event
}

func generate(t *testing.T, e *Engine, req Request) result {
	t.Helper()
	ch, err := e.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var r result
	for ev := range ch {
		r.last = ev
		if ev.Done {
			continue
		}
		r.ids = append(r.ids, ev.Token)
		if ev.Logprob != nil {
			r.lps = append(r.lps, float64(ev.Logprob.Logprob))
		}
	}
	return r
}

func sameResult(t *testing.T, what string, got, want result, tol float64) {
	t.Helper()
	if !equal(got.ids, want.ids) {
		t.Fatalf("%s: tokens %v, want %v", what, got.ids, want.ids)
	}
	for i := range want.lps {
		if math.Abs(got.lps[i]-want.lps[i]) > tol {
			t.Fatalf("%s: token %d logprob %g, want %g", what, i, got.lps[i], want.lps[i])
		}
	}
}

var prompts = []string{
	"Once upon a time, there was a little girl named Lily. She liked to play in the park with her friends",
	"Once upon a time, there was a little girl named Lily. She had a big red ball",
	"The dog ran to the tree",
	"Tom and Sue went to the beach. They saw a big fish in the water and",
	"One day, a bird",
	"Once upon a time, there was a little boy",
}

func req(p string) Request {
	return Request{Prompt: p, MaxTokens: 24, IgnoreEOS: true, Logprobs: true}
}

// singles runs each prompt alone on a fresh engine with the whole prompt in one chunk
// and no prefix cache in play: the reference for the properties below.
func singles(t *testing.T) []result {
	t.Helper()
	out := make([]result, len(prompts))
	for i, p := range prompts {
		e := newStoriesOpt(t, Options{ContextSize: 256, PrefillChunk: 512, BlockSize: 4, Parallel: 1})
		out[i] = generate(t, e, req(p))
		if out[i].last.Usage.CachedTokens != 0 {
			t.Fatalf("a fresh engine reused %d tokens", out[i].last.Usage.CachedTokens)
		}
	}
	return out
}

// concurrently starts every prompt at once and waits for all of them.
func concurrently(t *testing.T, e *Engine) []result {
	t.Helper()
	out := make([]result, len(prompts))
	var wg sync.WaitGroup
	for i, p := range prompts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = generate(t, e, req(p))
		}()
	}
	wg.Wait()
	return out
}

// TestBatchEqualsSingles: sequences batched together (continuous batching, chunked
// prefill under a small budget, prompts read one token per step, shared prefixes) give
// the same tokens and logprobs as each run alone; and so do they when the cache is so small that sequences are
// preempted and recomputed.
func TestBatchEqualsSingles(t *testing.T) {
	want := singles(t)
	for _, c := range []struct {
		name string
		opt  Options
	}{
		{"batched", Options{ContextSize: 256, PrefillChunk: 512, BlockSize: 4, Parallel: 6}},
		{"chunked", Options{ContextSize: 256, PrefillChunk: 5, BlockSize: 4, Parallel: 6}},
		{"token by token", Options{ContextSize: 256, PrefillChunk: 1, BlockSize: 4, Parallel: 6}},
		{"preempted", Options{ContextSize: 64, CacheTokens: 64, PrefillChunk: 16, BlockSize: 4, Parallel: 6}},
	} {
		t.Run(c.name, func(t *testing.T) {
			opt := c.opt
			opt.checkIntegrity = true
			e := newStoriesOpt(t, opt)
			got := concurrently(t, e)
			for i := range prompts {
				sameResult(t, fmt.Sprintf("prompt %d", i), got[i], want[i], 1e-5)
			}
			st := e.Stats()
			if c.name == "preempted" && st.Preemptions == 0 {
				t.Errorf("no preemption with a cache of 64 positions: %+v", st)
			}
			waitIdle(t, e)
		})
	}
}

// waitIdle waits for the scheduler to report no sequence and no used block.
func waitIdle(t *testing.T, e *Engine) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st := e.Stats()
		if st.Running == 0 && st.Waiting == 0 && st.KVBlocksUsed == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("engine not idle: %+v", st)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestPrefixHitEqualsMiss: a request whose prompt is mostly in the prefix cache gives
// the same tokens and logprobs as on a fresh engine, and reports the cached tokens.
func TestPrefixHitEqualsMiss(t *testing.T) {
	want := singles(t)
	e := newStoriesOpt(t, Options{ContextSize: 256, PrefillChunk: 512, BlockSize: 4})
	generate(t, e, req(prompts[0]))
	got := generate(t, e, req(prompts[1])) // shares "Once upon ... Lily. She"
	sameResult(t, "after a prefix hit", got, want[1], 1e-5)
	if got.last.Usage.CachedTokens < 12 {
		t.Errorf("cached tokens %d, want the shared prefix's full blocks", got.last.Usage.CachedTokens)
	}
	again := generate(t, e, req(prompts[1])) // all but the last block cached
	sameResult(t, "repeated", again, want[1], 1e-5)
	if n := again.last.Usage.PromptTokens - again.last.Usage.CachedTokens; n < 1 || n > 4 {
		t.Errorf("repeated prompt recomputed %d of %d tokens", n, again.last.Usage.PromptTokens)
	}
	st := e.Stats()
	if st.PrefixHitTokens == 0 || st.PrefixLookupTokens <= st.PrefixHitTokens {
		t.Errorf("prefix stats %+v", st)
	}
}

// TestConcurrentSamePromptComputedOnce: identical prompts arriving together (n choices)
// compute the prompt once: all but the first find it cached.
func TestConcurrentSamePromptComputedOnce(t *testing.T) {
	e := newStoriesOpt(t, Options{ContextSize: 256, PrefillChunk: 8, BlockSize: 4, Parallel: 4})
	var wg sync.WaitGroup
	res := make([]result, 4)
	for i := range res {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = generate(t, e, req(prompts[0]))
		}()
	}
	wg.Wait()
	cached := 0
	for _, r := range res {
		if !equal(r.ids, res[0].ids) {
			t.Fatalf("greedy choices differ: %v vs %v", r.ids, res[0].ids)
		}
		if r.last.Usage.CachedTokens > 0 {
			cached++
		}
	}
	if cached < 3 {
		t.Errorf("%d of 4 identical concurrent prompts hit the cache, want 3", cached)
	}
}

// TestCancelFreesBlocks: cancelled requests release their blocks at once.
func TestCancelFreesBlocks(t *testing.T) {
	e := newStoriesOpt(t, Options{ContextSize: 256, BlockSize: 4, Parallel: 4})
	var cancels []context.CancelFunc
	var chans []<-chan Event
	for range 3 {
		ctx, cancel := context.WithCancel(context.Background())
		ch, err := e.Generate(ctx, Request{Tokens: []int32{1}, IgnoreEOS: true})
		if err != nil {
			t.Fatal(err)
		}
		cancels, chans = append(cancels, cancel), append(chans, ch)
	}
	for _, ch := range chans {
		<-ch
	}
	// Stats are published after each step; the generations run until cancelled.
	for deadline := time.Now().Add(5 * time.Second); e.Stats().KVBlocksUsed == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no blocks in use while generating: %+v", e.Stats())
		}
	}
	for _, c := range cancels {
		c()
	}
	for _, ch := range chans {
		for ev := range ch {
			if ev.Done && ev.Finish != FinishCancelled {
				t.Errorf("finish %q, want cancelled", ev.Finish)
			}
		}
	}
	waitIdle(t, e)
}

// TestGenerateBatch: requests sent as one batch reach the same step (greedy ones of one
// length then end together: one argmax a step, as many steps as tokens), each gives the
// tokens it gives alone, and a batch with an invalid request starts none of them and
// names the one.
func TestGenerateBatch(t *testing.T) {
	const n = 12
	reqs := make([]Request, 6)
	for i := range reqs {
		toks := make([]int32, 20+i) // no two share a first token (else one waits for the other's prefill)
		for j := range toks {
			toks[j] = int32(7 + 31*i + 5*j)
		}
		reqs[i] = Request{Tokens: toks, MaxTokens: n, IgnoreEOS: true}
	}
	opt := Options{ContextSize: 256, PrefillChunk: 512, Parallel: len(reqs)}
	cb := &countingBackend{Backend: hostBackends[1].make(t)}
	e := newStoriesOn(t, cb, opt)
	chs, err := e.GenerateBatch(context.Background(), reqs)
	if err != nil {
		t.Fatal(err)
	}
	alone := newStoriesOn(t, hostBackends[1].make(t), opt)
	for i, ch := range chs {
		var got result
		for ev := range ch {
			if got.last = ev; !ev.Done {
				got.ids = append(got.ids, ev.Token)
			}
		}
		sameResult(t, fmt.Sprintf("request %d", i), got, generate(t, alone, reqs[i]), 0)
	}
	if s := cb.argmax.Load(); s != n {
		t.Fatalf("%d requests of %d tokens took %d steps with logits, want %d: they did not start together", len(reqs), n, s, n)
	}
	bad := []Request{reqs[0], reqs[1], {Tokens: []int32{}}}
	if _, err := e.GenerateBatch(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "request 2 of 3") {
		t.Fatalf("a batch with an empty prompt: %v", err)
	}
	waitIdle(t, e)
	if st := e.Stats(); st.Running+st.Waiting != 0 || cb.argmax.Load() != n {
		t.Fatalf("after a refused batch: %+v, %d steps", st, cb.argmax.Load())
	}
}
