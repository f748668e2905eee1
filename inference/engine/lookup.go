package engine

import (
	"fmt"
	"slices"
)

// Speculative decoding by prompt lookup. A decoding sequence whose last few tokens
// occurred earlier in its prompt or output guesses that what followed them then follows
// now (code being edited, a document being quoted, a list being continued): those
// tokens (at most Options.Lookup draft tokens a pass in all, as many as pay:
// lookup_cost.go) are evaluated in the same forward pass as its next token, each with
// its logits row. The rows are then drawn in order exactly as
// decoding would draw them one step at a time (the same sampler, penalties and random
// draws), and each draft token counts only while it equals the token drawn before it:
// the first mismatch ends the step with the drawn token, and the K/V of the positions
// past the accepted ones are dropped. So the output is what decoding without drafts
// gives, in fewer forward passes when the guesses hold: one pass reads the weights once
// for all the rows.
const (
	// lookupMaxN and lookupMinN bound the n-grams matched, longest first: a match of one
	// token is too often a coincidence to be worth a draft.
	lookupMaxN, lookupMinN = 4, 2
	// lookupWindow is how far back the search goes, in tokens.
	lookupWindow = 1 << 14
	// predictionLookup is the most draft tokens a step of a request with a prediction
	// takes when Options.Lookup is smaller (four rows: one pass of the CPU's small-batch
	// kernels).
	predictionLookup = 3
	// predictionNear is how far from where a prediction is expected to continue a match
	// of a single token is taken.
	predictionNear = 64
	// lookupCoolMax bounds the steps a sequence drafts nothing after drafts of which no
	// token held: 2, 4, 8 ... steps after as many such drafts in a row, so that text
	// that does not repeat itself costs few rows (on two CPU cores a step of four rows
	// took ~1.8 times one of a single row).
	lookupCoolMax = 64
)

// lookupDraft appends to dst up to k tokens that followed an earlier occurrence of the
// last n tokens of toks (n from lookupMaxN down to lookupMinN), and returns it: the
// latest occurrence followed by k tokens, else the one followed by the most (a
// repeating pattern shorter than k, "a b a b", is followed by k tokens only further
// back).
func lookupDraft(dst, toks []int32, k int) []int32 {
	if k <= 0 {
		return dst
	}
	lo := max(0, len(toks)-lookupWindow)
	for n := lookupMaxN; n >= lookupMinN; n-- {
		if len(toks)-lo <= n {
			continue
		}
		suffix, at := toks[len(toks)-n:], -1
		for i := len(toks) - n - 1; i >= lo; i-- {
			if toks[i] != suffix[0] || !slices.Equal(toks[i:i+n], suffix) {
				continue
			}
			at = i
			if len(toks)-(i+n) >= k {
				break
			}
		}
		if at >= 0 {
			return append(dst, toks[at+n:min(at+n+k, len(toks))]...)
		}
	}
	return dst
}

// draftFor sets q.draft for this step: at most k tokens, fewer where the request's
// token limit or the context leaves less room or where more do not pay at q's
// acceptance (lookup_cost.go: then one token every probeEvery steps), none while q cools
// down after drafts that failed. It is empty unless q is decoding (one token to
// evaluate, its prompt in the cache).
func (s *scheduler) draftFor(q *sequence, k int) {
	q.draft = q.draft[:0]
	if k <= 0 || !q.promptCached || q.ended || len(q.tokens)-q.computed != 1 {
		return
	}
	if q.cool > 0 {
		q.cool--
		return
	}
	if m := q.j.req.MaxTokens; m > 0 {
		k = min(k, m-q.u.CompletionTokens-1) // the step draws at most k+1 tokens
	}
	k = min(k, q.ctx-len(q.tokens)) // positions computed .. computed+k stay in the context
	limit := s.opt.Lookup
	if len(q.j.prediction) > 0 {
		limit = max(limit, predictionLookup)
	}
	k = min(k, limit)
	q.probe = false
	switch n := s.cost.length(q.acc, k); {
	case s.opt.lookupAlways: // tests: all k
	case n > 0:
		k = n
	case k > 0: // drafts do not pay at q's acceptance: one token now and then
		k, q.probe, q.cool = 1, true, probeEvery
	}
	q.fromPred = false
	if len(q.j.prediction) > 0 {
		q.draft = q.predictionDraft(q.draft, k)
		q.fromPred = len(q.draft) > 0
	}
	if len(q.draft) == 0 && s.opt.Lookup > 0 {
		q.draft = lookupDraft(q.draft, q.tokens, min(k, s.opt.Lookup))
	}
	if len(q.draft) == 0 && q.probe {
		q.probe, q.cool = false, 0 // nothing to probe with: look again next step
	}
}

// verify draws the rows of p, a sequence evaluated with its draft, starting at row
// row0: token by token as decoding would, while each drawn token equals the next draft
// token; then keeps the K/V of the positions whose tokens were accepted and drops the
// rest.
func (s *scheduler) verify(p planned, row0 int) {
	q := p.q
	old, accepted := q.computed, 0
	s.growRaws(1)
	for i := 0; i < p.n && !q.ended; i++ {
		id, lp := s.drawRow(q, row0+i, 0)
		q.emit(id, lp, s)
		if i == len(p.draft) || id != p.draft[i] {
			break
		}
		accepted++
	}
	q.accept(len(p.draft), accepted)
	if q.fromPred {
		q.u.PredictionAccepted += accepted
		q.u.PredictionRejected += len(p.draft) - accepted
		q.predAt += accepted + 1 // where the prediction is expected to go on
	}
	if accepted > 0 {
		q.fails = 0
		if !q.probe {
			q.cool = 0
		}
	} else {
		q.fails++
		q.cool = max(q.cool, min(1<<min(q.fails, 30), lookupCoolMax))
	}
	s.drafted += int64(len(p.draft))
	s.accepted += int64(accepted)
	// The positions old .. old+accepted hold the step's input token and the accepted
	// drafts, which are now q.tokens there; an ended sequence may have fewer tokens.
	q.computed = min(old+1+accepted, len(q.tokens))
	copies, err := q.kv.Truncate(q.computed)
	if err == nil && len(copies) > 0 {
		// Only a block shared with the prefix cache or a fork needs a copy; the drafted
		// positions lie in this sequence's own blocks, past its cached prompt.
		err = fmt.Errorf("a shared block at position %d", q.computed)
	}
	if err != nil {
		q.end(Event{Finish: FinishError, Err: fmt.Errorf("engine: dropping rejected draft tokens: %w", err)})
	}
}

// predictionDraft appends to dst up to k tokens of q's prediction that would follow its
// output so far, and returns it: where the output's last n tokens (n from lookupMaxN
// down to 2, anywhere; 1, near where the prediction is expected to continue) occur in
// the prediction, the occurrence nearest that place; before any output, the
// prediction's start.
func (q *sequence) predictionDraft(dst []int32, k int) []int32 {
	pred, gen := q.j.prediction, q.tokens[q.u.PromptTokens:]
	if k <= 0 {
		return dst
	}
	if len(gen) == 0 {
		q.predAt = 0
		return append(dst, pred[:min(k, len(pred))]...)
	}
	for n := min(lookupMaxN, len(gen)); n >= 1; n-- {
		suffix, at, best := gen[len(gen)-n:], -1, 0
		for i := 0; i+n <= len(pred); i++ {
			if pred[i] != suffix[0] || !slices.Equal(pred[i:i+n], suffix) {
				continue
			}
			d := i + n - q.predAt
			if d < 0 {
				d = -d
			}
			if at < 0 || d < best {
				at, best = i, d
			}
		}
		if at < 0 || (n == 1 && best > predictionNear) || at+n == len(pred) {
			continue
		}
		q.predAt = at + n
		return append(dst, pred[at+n:min(at+n+k, len(pred))]...)
	}
	return dst
}
