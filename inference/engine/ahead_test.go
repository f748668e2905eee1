package engine

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"ember/inference/backend"
	"ember/inference/backend/cuda"
	"ember/inference/quant"
	"ember/inference/sample"
)

// feedingBackend is countingBackend with a backend.Feeder done on the host, so the
// scheduler's steps go ahead on the CPU backends too: ArgMaxAhead takes the argmax at
// once and writes the ids into a feed tensor, which Fed views; Wait hands the ids over
// (once). It counts the steps fed.
type feedingBackend struct {
	countingBackend
	feed                backend.Tensor
	rows                int
	ahead, fed, sampled atomic.Int64
	rowDraws            atomic.Int64 // Row draws among the sampled
	nucleusDraws        atomic.Int64 // Nucleus draws among the sampled
	penalized           atomic.Int64 // draws with penalties
	seenFed             atomic.Int64 // draws with penalties counting their fed token
	last                []int32      // the feed's ids
	debug               bool
}

type hostPending struct {
	ids    []int32
	waited bool
}

func (p *hostPending) Wait(_ context.Context, dst []int32) error {
	if p.waited || len(dst) != len(p.ids) {
		return fmt.Errorf("wait of %d ids into %d (waited %v)", len(p.ids), len(dst), p.waited)
	}
	p.waited = true
	copy(dst, p.ids)
	return nil
}

func (f *feedingBackend) ArgMaxAhead(ctx context.Context, src backend.Tensor) (backend.Pending, error) {
	f.ahead.Add(1)
	ids := make([]int32, src.Rows())
	if err := f.Backend.(backend.ArgMaxer).ArgMax(ctx, src, ids); err != nil {
		return nil, err
	}
	return f.feedIDs(ids)
}

// SampleAhead draws each row's token on the host as the contract says
// (sample.Draw.PickRow).
func (f *feedingBackend) SampleAhead(ctx context.Context, src backend.Tensor, draws []sample.Draw) (backend.Pending, error) {
	f.ahead.Add(1)
	f.sampled.Add(1)
	if _, err := backend.CheckDraws("host", src.Rows(), draws); err != nil {
		return nil, err
	}
	rows, cols := src.Rows(), src.Cols()
	logits := make([]float32, rows*cols)
	if err := f.Backend.ReadF32(ctx, src, logits); err != nil { // not counted as a read
		return nil, err
	}
	ids := make([]int32, rows)
	for r, d := range draws {
		fed := int32(-1)
		if d.SeenFed {
			fed = f.last[r] // the feed's id for the row
		}
		ids[r] = d.PickRow(logits[r*cols:(r+1)*cols], fed)
		if f.debug {
			fmt.Printf("draw seen %v fed %v %d -> %d\n", d.Seen, d.SeenFed, fed, ids[r])
		}
		if d.Row {
			f.rowDraws.Add(1)
		}
		if d.Nucleus {
			f.nucleusDraws.Add(1)
		}
		if len(d.Seen) > 0 || d.SeenFed {
			f.penalized.Add(1)
		}
		if d.SeenFed {
			f.seenFed.Add(1)
		}
	}
	return f.feedIDs(ids)
}

// feedIDs writes ids into the feed and returns them as a result to wait for.
func (f *feedingBackend) feedIDs(ids []int32) (backend.Pending, error) {
	if f.feed == nil || f.feed.Rows() < len(ids) {
		t, err := f.Backend.New(quant.I32, max(len(ids), 16), 1)
		if err != nil {
			return nil, err
		}
		f.feed = t
	}
	f.Backend.WriteI32(f.Backend.View(f.feed, 0, len(ids)), ids)
	f.rows, f.last = len(ids), ids
	return &hostPending{ids: ids}, nil
}

func (f *feedingBackend) Fed(n int) backend.Tensor {
	if n > f.rows {
		panic(fmt.Sprintf("Fed(%d) after %d ids", n, f.rows))
	}
	f.fed.Add(1)
	return f.Backend.View(f.feed, 0, n)
}

// aheadRequests are requests that end in every way a step ahead must handle: by their
// token limits (1, 2 and 3 tokens: shorter than the steps queued ahead), by a stop
// string, by an end-of-generation token, by the context, and at different steps, so the
// later steps have fewer rows. Greedy, or with sampled set, drawn from their top k (the
// app's settings and others), from the whole row at a temperature or from its nucleus
// (top-p or min-p without top-k), some with penalties (request 3 greedy with them);
// request 5 greedy among them, so steps mix the kinds.
func aheadRequests(sampled bool) []Request {
	reqs := []Request{
		{Prompt: prompts[0], MaxTokens: 24, IgnoreEOS: true},
		{Prompt: prompts[1], MaxTokens: 1, IgnoreEOS: true},
		{Prompt: prompts[2], MaxTokens: 2, IgnoreEOS: true},
		{Prompt: prompts[3], MaxTokens: 3, IgnoreEOS: true},
		{Prompt: prompts[4], MaxTokens: 40, Stop: []string{"."}},
		{Prompt: prompts[5], MaxTokens: 80},
		{Prompt: prompts[0], IgnoreEOS: true}, // to the end of the context
		{Prompt: prompts[2], MaxTokens: 17, IgnoreEOS: true},
	}
	if sampled {
		for i := range reqs {
			if i != 5 {
				reqs[i].Sampling = sample.Params{Temperature: 0.7, TopK: 40, TopP: 0.95, MinP: 0.05, Seed: uint64(i + 1)}
			}
		}
		reqs[2].Sampling = sample.Params{Temperature: 1.5, TopK: 5, Seed: 9}
		reqs[6].Sampling = sample.Params{Temperature: 1, TopK: 256, TopP: 0.5, Seed: 10}
		reqs[7].Sampling = sample.Params{Temperature: 0.3, TopK: 1, MinP: 2, Seed: 11}
		// From the whole row at a temperature alone, as OpenAI clients ask.
		reqs[0].Sampling = sample.Params{Temperature: 1, TopP: 1, Seed: 12} // alone too, below
		reqs[4].Sampling = sample.Params{Temperature: 0.8, Seed: 13}
		// With penalties: Ollama's defaults (repeat 1.1 over 64 tokens), greedy with a
		// short window, OpenAI's presence and a strong frequency penalty on a whole-row
		// draw, and (request 8) a strong presence penalty over four tokens on the top
		// candidate, which a token left out of the window or kept in it too long changes. Their prompts
		// are their own: a prompt shared with another request may be computed in other
		// chunks (a prefix-cache hit), which moves its logits within rounding, and a
		// penalty may make that another token.
		reqs[6].Sampling = sample.Params{Temperature: 0.8, TopK: 40, TopP: 0.9, Seed: 14,
			Penalties: sample.Penalties{Repeat: 1.1, LastN: 64}}
		reqs[3].Sampling = sample.Params{Penalties: sample.Penalties{Repeat: 1.3, LastN: 8}}
		reqs[4].Sampling.Penalties = sample.Penalties{Presence: 0.4, Frequency: 2, LastN: 3}
		// From the whole row's nucleus: top-p alone (OpenAI clients that send top_p),
		// min-p alone with a frequency penalty.
		reqs = append(reqs, Request{Prompt: "A small bird sang in the tall green", MaxTokens: 20, IgnoreEOS: true,
			Sampling: sample.Params{Temperature: 0.9, TopP: 0.9, Seed: 17}},
			Request{Prompt: "Once upon a time a girl found a red", MaxTokens: 20, IgnoreEOS: true,
				Sampling: sample.Params{Temperature: 1.2, MinP: 0.05, Seed: 18, Penalties: sample.Penalties{Frequency: 0.5, LastN: 16}}})
		reqs = append(reqs, Request{Prompt: "The old dog slept by the warm fire while the", MaxTokens: 30, IgnoreEOS: true,
			Sampling: sample.Params{Temperature: 1, TopK: 1, Seed: 16, Penalties: sample.Penalties{Presence: -4, Frequency: 1, LastN: 3}}})
	}
	return reqs
}

// TestAheadEqualsPlain: greedy requests decoded a step ahead of the host give the tokens,
// finish reasons and counts of the plain steps (ids read before the next step), batched
// together or one after another (while requests wait, steps do not go ahead), with the
// cache's integrity checked after every step and every block back when they are done;
// and so do requests drawing from their top k or their whole row (SampleAhead against
// Sample on the rows).
func TestAheadEqualsPlain(t *testing.T) {
	for _, sampled := range []bool{false, true} {
		reqs := aheadRequests(sampled)
		for _, hb := range hostBackends {
			for _, par := range []int{8, 3, 1} {
				t.Run(fmt.Sprintf("%s/parallel%d/sampled=%v", hb.name, par, sampled), func(t *testing.T) {
					testAheadEqualsPlain(t, hb.make, reqs, par, sampled)
				})
			}
		}
	}
}

// testAheadEqualsPlain is one case of TestAheadEqualsPlain.
func testAheadEqualsPlain(t *testing.T, newBackend func(*testing.T) backend.Backend, reqs []Request, par int, sampled bool) {
	opt := Options{ContextSize: 64, PrefillChunk: 16, BlockSize: 4, Parallel: par, checkIntegrity: true}
	want := runAll(t, newStoriesOn(t, &countingBackend{Backend: newBackend(t)}, opt), reqs)
	fb := &feedingBackend{countingBackend: countingBackend{Backend: newBackend(t)}}
	e := newStoriesOn(t, fb, opt)
	got := runAll(t, e, reqs)
	for i := range reqs {
		sameResult(t, fmt.Sprintf("request %d", i), got[i], want[i], 0)
		g, w := got[i].last, want[i].last
		if g.Finish != w.Finish || g.Usage.CompletionTokens != w.Usage.CompletionTokens || g.Err != nil {
			t.Fatalf("request %d: finish %q after %d tokens (%v), want %q after %d", i, g.Finish,
				g.Usage.CompletionTokens, g.Err, w.Finish, w.Usage.CompletionTokens)
		}
	}
	// How many steps went ahead above depends on the requests' arrival (none
	// while one waits); a request alone goes ahead from its second token.
	// Greedy steps never read logits; sampled ones, without a TopKer here, read them in
	// the steps that do not go ahead (the prompt's, the last ones).
	fed, reads := fb.fed.Load(), fb.reads.Load()
	sameResult(t, "request 0 alone", generate(t, e, reqs[0]), want[0], 0)
	// Request 0 (greedy, or drawing from its whole row) reads no row even in the steps
	// that do not go ahead (its first token's, its last ones): drawnOnBackend.
	if fb.fed.Load() < fed+int64(reqs[0].MaxTokens)/2 || (!sampled && reads != 0) || fb.reads.Load() != reads {
		t.Fatalf("%d steps went ahead, %d were fed (%d alone), logits read %d times", fb.ahead.Load(), fb.fed.Load(),
			fb.fed.Load()-fed, fb.reads.Load())
	}
	if sampled != (fb.sampled.Load() > 0) || sampled != (fb.rowDraws.Load() > 0) || sampled != (fb.penalized.Load() > 0) ||
		sampled != (fb.nucleusDraws.Load() > 0) {
		t.Fatalf("sampled %v: %d of %d steps ahead drawn, %d rows drawn whole, %d by their nucleus, %d penalized", sampled,
			fb.sampled.Load(), fb.ahead.Load(), fb.rowDraws.Load(), fb.nucleusDraws.Load(), fb.penalized.Load())
	}
	if sampled {
		// The last request alone on fresh engines (whether its steps above went ahead
		// depends on the arrival): its penalties' window is its newest token and the
		// two before it, the newest only on the device when its step goes ahead.
		last := reqs[len(reqs)-1]
		fb1 := &feedingBackend{countingBackend: countingBackend{Backend: newBackend(t)}}
		sameResult(t, "the last request alone", generate(t, newStoriesOn(t, fb1, opt), last),
			generate(t, newStoriesOn(t, newBackend(t), opt), last), 0)
		if fb1.seenFed.Load() == 0 {
			t.Fatal("the last request alone drew no token ahead with its fed token penalized")
		}
	}
	waitIdle(t, e)
}

// TestAheadCancel: a request cancelled while its steps go ahead ends as cancelled, the
// other goes on to its tokens, and every block comes back.
func TestAheadCancel(t *testing.T) {
	fb := &feedingBackend{countingBackend: countingBackend{Backend: hostBackends[0].make(t)}}
	opt := Options{ContextSize: 256, PrefillChunk: 16, BlockSize: 4, Parallel: 2, checkIntegrity: true}
	e := newStoriesOn(t, fb, opt)
	alone := generate(t, newStoriesOn(t, hostBackends[0].make(t), opt), Request{Prompt: prompts[3], MaxTokens: 60, IgnoreEOS: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := e.Generate(ctx, Request{Prompt: prompts[0], MaxTokens: 200, IgnoreEOS: true})
	if err != nil {
		t.Fatal(err)
	}
	other := make(chan result)
	go func() { other <- generate(t, e, Request{Prompt: prompts[3], MaxTokens: 60, IgnoreEOS: true}) }()
	n := 0
	var last Event
	for ev := range ch {
		if n++; n == 5 {
			cancel()
		}
		last = ev
	}
	if last.Finish != FinishCancelled || !errors.Is(last.Err, context.Canceled) {
		t.Fatalf("cancelled request ended %q (%v)", last.Finish, last.Err)
	}
	sameResult(t, "the other request", <-other, alone, 0)
	if fb.fed.Load() == 0 {
		t.Fatal("no step went ahead")
	}
	waitIdle(t, e)
}

// TestAheadCUDA: TestAheadEqualsPlain's requests on the GPU, where steps go ahead of the
// host for real (backend.Feeder), against the same backend with its ids read each step.
// It skips without a CUDA driver.
func TestAheadCUDA(t *testing.T) {
	if _, err := cuda.Devices(); errors.Is(err, cuda.ErrNoDriver) {
		t.Skipf("skipping: %v", err)
	}
	newCUDA := func(t *testing.T) backend.Backend {
		b, err := cuda.New(cuda.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}
	for _, sampled := range []bool{false, true} {
		reqs := aheadRequests(sampled)
		for _, par := range []int{8, 1} {
			t.Run(fmt.Sprintf("parallel%d/sampled=%v", par, sampled), func(t *testing.T) {
				opt := Options{ContextSize: 64, PrefillChunk: 16, BlockSize: 4, Parallel: par, checkIntegrity: true}
				sync := opt
				sync.SyncSteps = true
				want := runAll(t, newStoriesOn(t, newCUDA(t), sync), reqs)
				e := newStoriesOn(t, newCUDA(t), opt)
				t0 := time.Now()
				got := runAll(t, e, reqs)
				t.Logf("%d requests in %v", len(reqs), time.Since(t0))
				for i := range reqs {
					sameResult(t, fmt.Sprintf("request %d", i), got[i], want[i], 0)
					if g, w := got[i].last, want[i].last; g.Finish != w.Finish || g.Usage.CompletionTokens != w.Usage.CompletionTokens {
						t.Fatalf("request %d: finish %q after %d tokens, want %q after %d", i, g.Finish,
							g.Usage.CompletionTokens, w.Finish, w.Usage.CompletionTokens)
					}
				}
				waitIdle(t, e)
			})
		}
	}
}
