package engine

import (
	"context"
	"fmt"
	"slices"

	"ember/inference/backend"
)

// What a step reads back of its logits rows: ids drawn or found on the backend, top-k
// candidates, or the rows themselves.

// forward evaluates the plan's tokens and reads back what postprocess needs of the
// logits rows it asks for: when a row draws from its whole vocabulary and the backend
// can draw every row, the ids it draws into s.ids (drawnOnBackend); when every row is
// greedy and the backend finds argmaxes, only their ids into s.ids; when every row is
// greedy or samples from its top k alone and the backend finds top-k candidates, k
// candidates per row into s.ids and s.vals; else the rows into s.logits (NVocab floats
// per row, in plan order).
func (s *scheduler) forward(plan []planned) error {
	b := s.build(plan)
	out, err := s.m.Forward(context.Background(), s.cache, *b)
	s.argmax, s.topk = false, 0
	if err != nil || len(b.Logits) == 0 {
		return err
	}
	rows, nv := len(b.Logits), s.m.Params().NVocab
	if ok, err := s.drawnOnBackend(plan, out); ok {
		s.argmax = err == nil // the ids drawn, which postprocess takes as argmaxes
		return err
	}
	if am, ok := s.m.Backend().(backend.ArgMaxer); ok && allGreedy(plan) {
		s.ids = slices.Grow(s.ids[:0], rows)[:rows]
		s.argmax = true
		return am.ArgMax(context.Background(), out, s.ids)
	}
	if tk, ok := s.m.Backend().(backend.TopKer); ok {
		if k := topKOf(plan, nv); k > 0 {
			s.ids = slices.Grow(s.ids[:0], rows*k)[:rows*k]
			s.vals = slices.Grow(s.vals[:0], rows*k)[:rows*k]
			if err := tk.TopK(context.Background(), out, k, s.ids, s.vals); err != nil {
				return fmt.Errorf("top-%d candidates: %w", k, err)
			}
			if everyRowHasCandidates(s.ids, k) {
				s.topk = k
				return nil
			}
			// A row of only NaNs and -Infs: its token is the row's argmax, read below.
		}
	}
	need := rows * nv
	if len(s.logits) < need {
		s.logits = make([]float32, need)
	}
	return s.m.Backend().ReadF32(context.Background(), out, s.logits[:need])
}

// allGreedy reports whether every sequence of the plan that gets a logits row samples
// it greedily and wants nothing else of it.
func allGreedy(plan []planned) bool {
	for _, p := range plan {
		if p.rows() > 0 && !p.q.greedy() {
			return false
		}
	}
	return true
}

// topKOf returns how many candidates per logits row the plan's sequences draw from when
// each is greedy (1) or samples from its row's top k alone (k, see
// sample.Sampler.TopKOnly): the largest of them, at most backend.MaxTopK; 0 when a row
// needs more (a logprob, a penalty, a larger or no top-k).
func topKOf(plan []planned, vocab int) int {
	k := 0
	for _, p := range plan {
		q := p.q
		switch {
		case p.rows() == 0:
			continue // no logits row
		case q.wholeRow():
			return 0 // logprobs, a constraint or a bias: the whole row
		case q.greedy():
			k = max(k, 1)
		default:
			n, ok := q.smp.TopKOnly(vocab)
			if !ok || n > backend.MaxTopK {
				return 0
			}
			k = max(k, n)
		}
	}
	return k
}

// everyRowHasCandidates reports whether each row of ids (k per row) has a first one.
func everyRowHasCandidates(ids []int32, k int) bool {
	for r := 0; r < len(ids); r += k {
		if ids[r] < 0 {
			return false
		}
	}
	return true
}
