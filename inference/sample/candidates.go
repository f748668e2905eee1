package sample

import "math"

// TopK writes the len(ids) first valid logits in the candidates' order (larger logit
// first, lower index on ties; NaN and -Inf are never candidates, +0 equals -0) into ids
// (their indices) and vals (their logits), then pads ids with -1 and vals with -Inf when
// fewer are valid: what a backend's top-k op (backend.TopKer) computes for one row.
// len(vals) must equal len(ids).
func TopK(logits []float32, ids []int32, vals []float32) {
	k := len(ids)
	c := topK(make([]candidate, 0, k), logits, k)
	sortCands(c)
	for i := range ids {
		if i < len(c) {
			ids[i], vals[i] = c[i].id, float32(c[i].p)
			continue
		}
		ids[i], vals[i] = -1, float32(math.Inf(-1))
	}
}

// TopKOnly reports whether Sample on a row of vocab logits draws from the row's TopK
// first candidates alone, and that k: temperature > 0, 0 < TopK < vocab (else Sample
// considers the whole row) and no penalty (they change the logits before top-k). Then
// SampleTop on those candidates (from TopK or a backend's top-k op) draws what Sample
// on the row would.
func (s *Sampler) TopKOnly(vocab int) (k int, ok bool) {
	k = s.p.TopK
	if s.p.Temperature <= 0 || k <= 0 || k >= vocab || s.p.Penalties.active() {
		return 0, false
	}
	return k, true
}

// SampleTop draws one token id, as Sample would from the whole row, from the row's first
// candidates in order (ids and vals as TopK writes them, at least TopK of them or up to
// the first id -1) and accepts it; the sampler must be TopKOnly. It draws the same
// token and consumes the random source the same way as Sample on the row: the softmax
// at the temperature over the TopK first candidates, top-p, min-p, the draw. With no
// candidate (ids[0] < 0: a row of NaNs and -Infs) Sample's answer is the row's argmax,
// which the candidates cannot tell: SampleTop returns ok false and does nothing, and
// the caller calls Sample on the row instead.
func (s *Sampler) SampleTop(ids []int32, vals []float32) (id int32, ok bool) {
	c := s.cand[:0]
	for i := 0; i < len(ids) && i < s.p.TopK && ids[i] >= 0; i++ {
		c = append(c, candidate{ids[i], float64(vals[i])})
	}
	s.cand = c
	if len(c) == 0 {
		return 0, false
	}
	if c = s.trim(c, true); len(c) == 0 {
		id = ids[0] // min-p above 1 leaves nothing: Sample's Greedy, the first candidate
	} else {
		id = s.pick(c)
	}
	s.Accept(id)
	return id, true
}
