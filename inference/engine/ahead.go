package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"ember/inference/backend"
	"ember/inference/model"
	"ember/inference/sample"
)

// Decoding a step ahead of the host. On a backend that queues work and returns
// (backend.Feeder: CUDA), a step of greedy decode rows ends with ArgMaxAhead, and one
// whose rows draw from their top-k candidates (the app's default sampling) with
// SampleAhead, given each row's draw (its sampler's settings and the token's uniform,
// taken from the sequence's random source when the step is queued: the order Sample would
// take them in). Either leaves the ids on the device as the next step's tokens; the
// scheduler then queues step N+1 (its tokens fed from step N's ids) before it waits for
// step N's ids, so the device goes from one step to the next without waiting for the host
// to read the ids, stream them and build the step (as SGLang's overlap scheduler does).
// Each sequence then has one step in flight past the tokens it has seen: when step N ends
// it (a stop token or string, a cancelled request), step N+1's row for it is thrown away.
// Only steps whose every row is a decode row without drafts, greedy or drawn from its top
// k alone (no penalties, logprobs, grammar or logit bias), go ahead, and only while no
// request waits to be admitted: the rest take the plain step.

// aheadStep is a decode step queued on the device whose ids are not read yet.
type aheadStep struct {
	plan []planned
	ids  backend.Pending
}

// feeder is the model's backend as a Feeder when steps may go ahead on it.
func (s *scheduler) feeder() (backend.Feeder, bool) {
	if s.opt.Lookup > 0 || s.opt.SyncSteps {
		return nil, false // drafts need each step's tokens on the host
	}
	return model.FeederOf(s.m)
}

// goesAhead reports whether plan, just scheduled, may end with ArgMaxAhead or
// SampleAhead: every running sequence decodes one row in it that may be drawn on the
// backend (drawsAhead), without drafts, none waits, and each may take two more tokens
// (the step after it is then worth queuing).
func (s *scheduler) goesAhead(plan []planned) bool {
	if _, ok := s.feeder(); !ok || len(s.waiting) > 0 || len(plan) != len(s.running) {
		return false
	}
	for _, p := range plan {
		q := p.q
		if p.n != 1 || len(p.draft) > 0 || p.rows() != 1 || !s.drawsAhead(q) || len(q.j.prediction) > 0 || q.ended {
			return false
		}
		if mt := q.j.req.MaxTokens; mt > 0 && q.u.CompletionTokens+2 > mt {
			return false
		}
		if len(q.tokens)+2 > q.ctx {
			return false
		}
	}
	return true
}

// drawsAhead reports whether q's next token may be drawn on the backend: greedy, from
// its row's top k alone with k at most backend.MaxTopK, or from the whole row at its
// temperature alone or by top-p and min-p, with or without penalties
// (sample.Sampler.AheadOK).
func (s *scheduler) drawsAhead(q *sequence) bool {
	if q.greedy() {
		return true
	}
	return !q.wholeRow() && q.smp.AheadOK(s.m.Params().NVocab, backend.MaxTopK, backend.MaxSeen)
}

// forwardAhead evaluates plan (goesAhead's) and queues its ids ahead (argmaxes, or draws
// when a row samples), fed from the ids of the step before when fed is set.
func (s *scheduler) forwardAhead(plan []planned, fed bool) (backend.Pending, error) {
	fd, _ := s.feeder()
	b := s.build(plan)
	if fed {
		// Each sequence's token at q.computed is step N's, still on the device: step
		// N+1 evaluates the token after it, whose id is row i of the feed.
		b.Tokens, b.Fed = b.Tokens[:0], true
		for i := range b.Pos {
			b.Pos[i]++
		}
	}
	out, err := s.m.Forward(context.Background(), s.cache, *b)
	if err != nil {
		return nil, err
	}
	if allGreedy(plan) {
		return fd.ArgMaxAhead(context.Background(), out)
	}
	return s.sampleAhead(fd, plan, out, fed)
}

// sampleAhead queues the draws of out's rows, one for each entry of plan that has a
// logits row (each at most one, drawsAhead's), taking each token's uniform from its
// sampler; fed says the rows' step was fed the step before's ids (not yet accepted).
func (s *scheduler) sampleAhead(fd backend.Feeder, plan []planned, out backend.Tensor, fed bool) (backend.Pending, error) {
	draws := make([]sample.Draw, 0, len(plan))
	for _, p := range plan {
		if p.rows() == 0 {
			continue
		}
		d, ok := p.q.smp.Ahead(s.m.Params().NVocab, fed)
		if !ok {
			return nil, errors.New("engine: a row queued ahead cannot be drawn on the backend")
		}
		draws = append(draws, d)
	}
	return fd.SampleAhead(context.Background(), out, draws)
}

// drawnOnBackend is a step's tokens for a step that does not go ahead (a request
// waiting, a prompt's first token, a sequence's last ones) when one of its rows needs
// more than its top k candidates (a draw from the whole vocabulary or its nucleus, or
// penalties): the backend draws them (SampleAhead, waited for at once) so the rows need
// not come to the host, when each of the plan's entries has at most one row and every
// row may be drawn there (drawsAhead). ok is false, and nothing is queued, otherwise: the rows are then
// read as before (their top k through TopK when every row's top k serves). The ids go
// to s.ids, as ArgMax's would.
func (s *scheduler) drawnOnBackend(plan []planned, out backend.Tensor) (ok bool, err error) {
	fd, isFeeder := model.FeederOf(s.m)
	if !isFeeder {
		return false, nil
	}
	rows := 0
	for _, p := range plan {
		switch n := p.rows(); {
		case n == 0:
			continue
		case n > 1 || !s.drawsAhead(p.q):
			return false, nil
		}
		rows++
	}
	if rows == 0 || topKOf(plan, s.m.Params().NVocab) > 0 {
		return false, nil // every row's top k serve: TopK's candidates are read instead
	}
	pend, err := s.sampleAhead(fd, plan, out, false)
	if err != nil {
		return true, err
	}
	s.ids = slices.Grow(s.ids[:0], rows)[:rows]
	return true, pend.Wait(context.Background(), s.ids)
}

// stepAhead is a step while s.ahead (step N) is on the device: it queues step N+1, fed
// from step N's ids, when every sequence of step N may go on ahead, then reads step N's
// ids and advances its sequences. Step N+1's sequences are in step N's order, so row i
// of the feed is sequence i's token.
func (s *scheduler) stepAhead() {
	a := s.ahead
	s.ahead = nil
	next, nextErr := s.queueNext(a.plan)
	if next == nil && nextErr != nil { // a position taken ahead could not be given back
		for _, p := range a.plan {
			p.q.end(Event{Finish: FinishError, Err: nextErr})
		}
	}
	var pend backend.Pending
	if next != nil && nextErr == nil {
		pend, nextErr = s.forwardAhead(next, true)
	}
	rows := len(a.plan)
	s.ids = slices.Grow(s.ids[:0], rows)[:rows]
	if err := a.ids.Wait(context.Background(), s.ids); err != nil {
		s.failPlan(a.plan, err)
		s.settleNext(next, pend, err)
		return
	}
	s.argmax, s.topk = true, 0
	// Rows of sequences ended since the step was queued (cancelled, or ended by the step
	// before) are thrown away.
	kept := a.plan[:0]
	for i, p := range a.plan {
		if !p.q.ended {
			s.ids[len(kept)] = s.ids[i]
			kept = append(kept, p)
		}
	}
	s.postprocess(kept)
	s.retire()
	s.settleNext(next, pend, nextErr)
}

// queueNext plans the step after prev (on the device now) for prev's sequences, one
// token each at the position past prev's, taking a cache position for each; nil when
// one of them may not go on ahead or a position cannot be had (then none is taken).
func (s *scheduler) queueNext(prev []planned) ([]planned, error) {
	if !s.goesAhead(prev) {
		return nil, nil
	}
	next := make([]planned, len(prev))
	for i, p := range prev {
		if err := p.q.kv.Append(1); err != nil {
			for _, r := range next[:i] {
				if _, err := r.q.kv.Truncate(r.q.kv.Len() - 1); err != nil {
					return nil, fmt.Errorf("engine: a position taken ahead: %w", err)
				}
			}
			return nil, nil
		}
		next[i] = planned{q: p.q, n: 1}
	}
	return next, nil
}

// settleNext keeps step N+1 (queued by stepAhead) as s.ahead once step N is
// postprocessed, without the rows of sequences that step N ended (their results are
// thrown away when read); with err, its sequences end with it.
func (s *scheduler) settleNext(next []planned, pend backend.Pending, err error) {
	if next == nil {
		return
	}
	if err != nil {
		if pend != nil {
			discard(pend, len(next))
		}
		s.failPlan(next, err)
		return
	}
	for _, p := range next {
		if !p.q.ended {
			s.ahead = &aheadStep{plan: next, ids: pend}
			return
		}
	}
	// Step N ended every sequence of step N+1: nothing of it is wanted.
	discard(pend, len(next))
}

// discard waits for the n ids of pend, which nothing wants, so that the device is done
// with the step (its error, if any, is the backend's and shows on the next call).
func discard(pend backend.Pending, n int) {
	_ = pend.Wait(context.Background(), make([]int32, n))
}

// drainAhead waits for a step left ahead (the engine closing), so no work on the device
// still uses the cache when it is freed.
func (s *scheduler) drainAhead() {
	if s.ahead != nil {
		discard(s.ahead.ids, len(s.ahead.plan))
		s.ahead = nil
	}
}
