package engine

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"ember/inference/sample"
)

// TestLookupDraft: the longest n-gram (up to lookupMaxN) is matched first, at its latest
// earlier occurrence followed by k tokens (else its latest); the draft is what followed,
// at most k tokens and never past the end; one-token matches and no match give none.
func TestLookupDraft(t *testing.T) {
	for _, c := range []struct {
		toks []int32
		k    int
		want []int32
	}{
		{[]int32{1, 2, 3, 9, 9, 1, 2, 3}, 4, []int32{9, 9, 1, 2}},
		{[]int32{1, 2, 3, 9, 9, 1, 2, 3}, 2, []int32{9, 9}},
		{[]int32{5, 2, 3, 7, 8, 1, 2, 3, 6, 2, 3}, 3, []int32{6, 2, 3}},       // the latest "2 3"
		{[]int32{4, 5, 6, 1, 7, 7, 5, 6, 2, 7, 4, 5, 6}, 3, []int32{1, 7, 7}}, // "4 5 6" beats the later "5 6"
		{[]int32{1, 2, 1, 2}, 5, []int32{1, 2}},                               // the draft stops at the end
		{[]int32{7, 7, 7, 7, 7, 7, 7, 7}, 3, []int32{7, 7, 7}},                // a short period: further back
		{[]int32{3, 1, 2, 8, 1, 2, 9, 9, 1, 2}, 3, []int32{9, 9, 1}},          // the latest with k tokens after it
		{[]int32{1, 2, 3, 4, 5, 3}, 4, nil},                                   // only a one-token match
		{[]int32{1, 2, 3}, 4, nil},
		{[]int32{1, 2, 1, 2}, 0, nil},
	} {
		got := lookupDraft(nil, c.toks, c.k)
		if !slices.Equal(got, c.want) {
			t.Errorf("lookupDraft(%v, %d) = %v, want %v", c.toks, c.k, got, c.want)
		}
	}
}

// TestLookupSameOutput: speculative decoding by prompt lookup gives the tokens (and
// logprobs, finishes and counts) of decoding without it, for greedy, sampled, penalized,
// logprob and stop-string requests, one at a time and batched (in a cache so small that
// sequences are preempted and recomputed too), to the end of the context too, while its
// drafts are taken (stories260K repeats itself). The block pool is checked after every
// step.
func TestLookupSameOutput(t *testing.T) {
	long := prompts[0] + ". " + prompts[0] + ". " + prompts[1]
	reqs := []Request{
		{Prompt: long, MaxTokens: 48, IgnoreEOS: true},
		{Prompt: prompts[0], MaxTokens: 48, IgnoreEOS: true, Logprobs: true, TopLogprobs: 2},
		{Prompt: prompts[1], MaxTokens: 40, IgnoreEOS: true, Sampling: sample.Params{Temperature: 0.8, Seed: 5}},
		{Prompt: prompts[2], MaxTokens: 40, IgnoreEOS: true, Sampling: sample.Params{Temperature: 1, TopK: 8, Seed: 6}},
		{Prompt: prompts[3], MaxTokens: 40, IgnoreEOS: true, Sampling: sample.Params{Penalties: sample.Penalties{Repeat: 1.2}}},
		{Prompt: prompts[5], MaxTokens: 60, IgnoreEOS: true, Stop: []string{"park"}},
		{Prompt: long}, // to the end of the context
		{Prompt: prompts[4], MaxTokens: 3, IgnoreEOS: true},
	}
	for _, hb := range hostBackends {
		t.Run(hb.name, func(t *testing.T) {
			for _, c := range []struct {
				parallel, cache int
				always          bool // every draft found, else as measured costs allow (lookup_cost.go)
			}{{1, 0, true}, {4, 0, true}, {4, 100, true}, {1, 0, false}, {4, 0, false}} {
				parallel := c.parallel
				opt := Options{ContextSize: 96, PrefillChunk: 32, BlockSize: 4, Parallel: parallel, CacheTokens: c.cache,
					checkIntegrity: true, lookupAlways: c.always}
				want := runAll(t, newStoriesOn(t, hb.make(t), opt), reqs)
				opt.Lookup = 4
				e := newStoriesOn(t, hb.make(t), opt)
				got := runAll(t, e, reqs)
				for i := range reqs {
					what := fmt.Sprintf("parallel %d, request %d", parallel, i)
					// The cpu kernels round a step of more rows a little differently (argmax_test.go),
					// and drafts make the steps wider: logprobs moved by up to 1.7e-4 (ref: exact).
					sameResult(t, what, got[i], want[i], 100*hb.tol)
					if g, w := got[i].last, want[i].last; g.Finish != w.Finish || g.Usage.CompletionTokens != w.Usage.CompletionTokens {
						t.Fatalf("%s: finish %q after %d tokens, want %q after %d", what, g.Finish, g.Usage.CompletionTokens,
							w.Finish, w.Usage.CompletionTokens)
					}
				}
				st := e.Stats()
				if c.always && st.DraftAccepted == 0 || st.DraftTokens < st.DraftAccepted {
					t.Fatalf("parallel %d: %d draft tokens, %d accepted: the drafts were never taken", parallel,
						st.DraftTokens, st.DraftAccepted)
				}
				if c.cache > 0 && st.Preemptions == 0 {
					t.Fatalf("a cache of %d positions for %d sequences preempted none", c.cache, parallel)
				}
				t.Logf("parallel %d, cache %d, always %v: %d draft tokens, %d accepted, %d preemptions", parallel, c.cache,
					c.always, st.DraftTokens, st.DraftAccepted, st.Preemptions)
			}
		})
	}
}

// TestLookupCost: base step times come from decode steps without drafts, a row's cost
// from steps with them against that base; drafts are as long as a^k stays above that
// cost, none (a probe) when the acceptance is below it; acceptance counts the tokens
// tried.
func TestLookupCost(t *testing.T) {
	c := newSpecCost()
	for _, x := range []struct {
		a    float64
		k    int
		want int
	}{{0.96, 3, 3}, {0.5, 3, 1}, {0.7, 8, 3}, {0.25, 3, 0}, {1, 4, 4}, {0.9, 0, 0}} {
		if got := c.length(x.a, x.k); got != x.want {
			t.Errorf("length(%g, %d) at row cost %g = %d, want %d", x.a, x.k, c.row, got, x.want)
		}
	}
	q := &sequence{tokens: []int32{1, 2}, computed: 1}
	one := []planned{{q: q, n: 1}}
	c.observe(one, 10*time.Millisecond)
	c.observe(one, 12*time.Millisecond)
	if want := 10.4e-3; math.Abs(c.base[0]-want) > 1e-9 {
		t.Errorf("base %g, want %g", c.base[0], want)
	}
	drafted := []planned{{q: q, n: 4, draft: []int32{5, 6, 7}}}
	c.observe(drafted, 16*time.Millisecond) // (16 - 10.4) / (3 * 10.4) = 0.1795 a row
	if want := 0.3 + 0.2*(5.6/31.2-0.3); math.Abs(c.row-want) > 1e-9 {
		t.Errorf("row cost %g, want %g", c.row, want)
	}
	q.acc = accPrior
	q.accept(3, 1) // one held, the second failed: 1 of 2 tried
	if want := accPrior + accStep*(0.5-accPrior); math.Abs(q.acc-want) > 1e-12 {
		t.Errorf("acceptance %g, want %g", q.acc, want)
	}
	q.accept(2, 2) // both held: 2 of 2
	if want := accPrior + accStep*(0.5-accPrior); q.acc <= want {
		t.Errorf("acceptance %g did not rise", q.acc)
	}
}

// TestPrediction: a request with a prediction (OpenAI's predicted outputs) gives the
// output it gives without one, drafting from the prediction even with prompt lookup
// off: a prediction equal to the output is accepted nearly whole, an edited one in part,
// an unrelated one not at all; the usage counts the prediction's tokens that held and
// those that did not.
func TestPrediction(t *testing.T) {
	opt := Options{ContextSize: 160, PrefillChunk: 32, BlockSize: 4, Parallel: 2, checkIntegrity: true, lookupAlways: true}
	base := Request{Prompt: prompts[0], MaxTokens: 60, IgnoreEOS: true}
	e := newStoriesOpt(t, opt)
	want := generate(t, e, base)
	text := e.tok.Decode(want.ids)
	edited := strings.Replace(text, "Lily", "Anna", 2)
	if edited == text {
		t.Fatalf("the output %q has no Lily to edit", text)
	}
	for _, c := range []struct {
		name, pred string
		most       bool // most of the prediction holds
	}{{"exact", text, true}, {"edited", edited, false}, {"unrelated", "The sky is blue and the sea is deep.", false}} {
		r := base
		r.Prediction = c.pred
		got := generate(t, e, r)
		sameResult(t, c.name, got, want, 0)
		u := got.last.Usage
		t.Logf("%s: %d prediction tokens held, %d did not", c.name, u.PredictionAccepted, u.PredictionRejected)
		switch {
		case c.most && u.PredictionAccepted < 2*len(want.ids)/3:
			t.Errorf("%s: %d of %d tokens came from the prediction", c.name, u.PredictionAccepted, len(want.ids))
		case c.name == "edited" && u.PredictionAccepted == 0:
			t.Errorf("edited: no token of the prediction held")
		case c.name == "unrelated" && u.PredictionAccepted > 5:
			t.Errorf("unrelated: %d tokens of it held", u.PredictionAccepted)
		}
	}
}
