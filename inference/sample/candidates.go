package sample

import (
	"math"
	"slices"
)

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
	if s.p.Temperature <= 0 || k <= 0 || k >= vocab || s.p.Penalties.Active() {
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
	if len(ids) == 0 || ids[0] < 0 {
		return 0, false
	}
	d := s.drawOf(s.rng.Float64())
	s.cand, id = d.pick(s.cand, ids, vals)
	s.Accept(id)
	return id, true
}

// Draw is one token's draw from its logits row's top-k candidates, made by whoever holds
// the candidates (a backend's Feeder.SampleAhead, on the device) with the sampler's
// settings and the uniform the sampler took for the token (Sampler.Ahead). Pick is the
// rule. A Row draw (K 0) is from the whole row instead: the softmax at Temp of every
// logit not negligibly likely, added in drawRow's fixed order, for a sampler with a
// temperature and no top-k, top-p or min-p. A Nucleus draw (K 0) is drawNucleus's, for
// a sampler with a temperature, top-p or min-p and no top-k. A draw with penalties (Pen
// active) applies them to the row first, for the tokens of Seen and, when SeenFed, the
// row's fed token (the token the row's step was fed, the sequence's newest: see PickRow).
type Draw struct {
	K          int     // candidates drawn from (the sampler's TopK); 0: greedy, the first
	Row        bool    // from the whole row (K, TopP and MinP 0)
	Nucleus    bool    // from the whole row's candidates by top-p and min-p (K 0)
	Temp       float64 // temperature, > 0 when K > 0, Row or Nucleus
	TopP, MinP float64 // the sampler's, widened: 0 (or TopP 1) keeps all
	U          float64 // the token's uniform in [0, 1)

	Pen     Penalties // the sampler's
	Seen    []int32   // the tokens penalized, each as often as it occurs (Pen active)
	SeenFed bool      // the row's fed token is one more
}

// AheadOK reports whether Ahead gives a draw for the sampler's next token from a row of
// vocab logits, for a backend that takes at most maxK candidates a row and maxSeen
// penalized tokens a draw: greedy, from the top k (k <= maxK), or at a finite
// temperature with no top-k below vocab (a Row or Nucleus draw); with any penalties,
// whose window holds fewer than maxSeen tokens (the fed one may join them).
func (s *Sampler) AheadOK(vocab, maxK, maxSeen int) bool {
	t := float64(s.p.Temperature)
	if t != t {
		return false // a NaN temperature: the host's draw, whatever it makes of it
	}
	if t > 0 {
		switch {
		case s.drawsRow(vocab) || s.drawsNucleus(vocab):
			if math.IsInf(t, 1) {
				return false
			}
		case s.p.TopK > maxK:
			return false // too many candidates
		}
	}
	return !s.p.Penalties.Active() || len(s.hist.window) < maxSeen // a fed token may join them
}

// Ahead returns the draw of the sampler's next token (AheadOK must hold), for a row not
// on the host, taking the token's uniform from the random source as Sample and
// SampleTop would; the caller then accepts the token drawn (Accept). fed says the row's
// step was fed the sequence's newest token, not yet accepted here (a step queued ahead),
// which a draw with penalties then counts as seen (SeenFed). A greedy sampler without
// penalties gives the zero Draw.
func (s *Sampler) Ahead(vocab int, fed bool) (d Draw, ok bool) {
	switch t := float64(s.p.Temperature); {
	case t != t:
		return Draw{}, false
	case t <= 0:
	case s.drawsRow(vocab) && !math.IsInf(t, 1):
		d = Draw{Row: true, Temp: t, U: s.rng.Float64()}
	case s.drawsNucleus(vocab) && !math.IsInf(t, 1):
		d = Draw{Nucleus: true, Temp: t, TopP: float64(s.p.TopP), MinP: float64(s.p.MinP), U: s.rng.Float64()}
	case s.p.TopK > 0 && s.p.TopK < vocab:
		d = s.drawOf(s.rng.Float64())
	default:
		return Draw{}, false
	}
	if s.p.Penalties.Active() {
		lastN := s.p.Penalties.window()
		d.Pen, d.SeenFed = s.p.Penalties, fed
		if fed {
			d.Seen = s.hist.aheadSeen(lastN)
		} else {
			d.Seen = s.hist.seen(lastN)
		}
	}
	return d, true
}

// drawOf is the sampler's Draw with uniform u.
func (s *Sampler) drawOf(u float64) Draw {
	return Draw{K: s.p.TopK, Temp: float64(s.p.Temperature), TopP: float64(s.p.TopP), MinP: float64(s.p.MinP), U: u}
}

// Pick returns the id d draws from a row's candidates (ids and vals as TopK writes them,
// at least d.K of them or up to the first id -1): a greedy Draw (K 0) takes the first;
// otherwise the softmax at d.Temp over the first d.K, top-p, min-p (the first candidate
// when min-p above 1 leaves none), then the candidate at d.U of the kept mass, in order:
// SampleTop's token for the same uniform. ok is false when the row has no candidate
// (ids[0] < 0); the token is then the row's argmax (Greedy), which the candidates
// cannot tell. Row and Nucleus draws are not made from candidates: ok is false.
func (d Draw) Pick(ids []int32, vals []float32) (id int32, ok bool) {
	if len(ids) == 0 || ids[0] < 0 || d.Row || d.Nucleus {
		return 0, false
	}
	_, id = d.pick(nil, ids, vals)
	return id, true
}

// PickRow returns the id d draws from a whole row of logits: Pick on the row's first
// max(d.K, 1) candidates (TopK), or the row's argmax (Greedy) when it has none; for a
// Row draw, Sample's draw from the whole row at d.Temp, and for a Nucleus draw
// drawNucleus's. With penalties it draws from a
// copy of the row penalized for Seen and, when SeenFed, fed. It is what a backend's
// SampleAhead (backend.Feeder) computes for a row.
func (d Draw) PickRow(row []float32, fed int32) int32 {
	if d.Pen.Active() {
		seen := d.Seen
		if d.SeenFed {
			seen = append(slices.Clip(seen), fed)
		}
		row = slices.Clone(row)
		penalizeSeen(row, d.Pen, seen)
	}
	switch {
	case d.Row:
		id, _ := drawRow(row, float32(d.Temp), d.U, nil)
		return id
	case d.Nucleus:
		id, _, _ := drawNucleus(row, float32(d.Temp), d.TopP, d.MinP, d.U, nil, nil)
		return id
	}
	k := max(d.K, 1)
	ids, vals := make([]int32, k), make([]float32, k)
	TopK(row, ids, vals)
	if id, ok := d.Pick(ids, vals); ok {
		return id
	}
	return Greedy(row)
}

// pick is Pick for a row with a candidate, in c's storage (returned for reuse).
func (d Draw) pick(c []candidate, ids []int32, vals []float32) ([]candidate, int32) {
	if d.K <= 0 {
		return c, ids[0]
	}
	c = c[:0]
	for i := 0; i < len(ids) && i < d.K && ids[i] >= 0; i++ {
		c = append(c, candidate{ids[i], float64(vals[i])})
	}
	kept := trim(c, d.Temp, d.TopP, d.MinP)
	if len(kept) == 0 {
		return c, ids[0] // min-p above 1 leaves nothing: Sample's Greedy, the first candidate
	}
	return c, pick(kept, d.U)
}
