// Package sample turns a row of logits into a token: greedy, or temperature sampling
// with top-k, top-p and min-p filtering from a seeded, reproducible random source.
package sample

import (
	"math/rand/v2"
)

// Params choose how tokens are drawn. Temperature <= 0 is greedy (argmax).
type Params struct {
	Temperature float32
	TopK        int     // keep the K most likely tokens; 0 keeps all
	TopP        float32 // keep the smallest set whose probability reaches TopP; 0 or 1 keeps all
	MinP        float32 // drop tokens less likely than MinP times the most likely; 0 keeps all
	Seed        uint64  // the same seed, logits and params give the same tokens
	Penalties   Penalties
}

// negligible is how far below the largest logit, in units of temperature, a token stops
// being a candidate when top-k does not pick the candidates.
const negligible = 30

// Sampler draws tokens; it keeps its random state between calls and is not safe for
// concurrent use.
type Sampler struct {
	p    Params
	rng  *rand.Rand
	cand []candidate
	w    []float64 // drawRow's weights
	hist history
}

type candidate struct {
	id int32
	p  float64
}

// New returns a sampler for p.
func New(p Params) *Sampler {
	return &Sampler{p: p, rng: rand.New(rand.NewPCG(p.Seed, p.Seed^0x9e3779b97f4a7c15))}
}

// Greedy returns the index of the largest logit, the lowest index on ties; NaNs never win.
func Greedy(logits []float32) int32 {
	best := -1
	for i, v := range logits {
		if v == v && (best < 0 || v > logits[best]) {
			best = i
		}
	}
	if best < 0 {
		return 0
	}
	return int32(best)
}

// IsGreedy reports whether Sample is Greedy for every row of logits: temperature <= 0
// and no penalty, so Sample neither draws nor changes the logits, and its only other
// effect is Accept of the token. A caller that found the argmax elsewhere (the
// backend's ArgMax) calls Accept with it instead of Sample.
func (s *Sampler) IsGreedy() bool {
	return s.p.Temperature <= 0 && !s.p.Penalties.Active()
}

// Accept records a token of the sequence (prompt or generated) for the penalties.
func (s *Sampler) Accept(id int32) {
	if s.p.Penalties.Active() {
		s.hist.add(id, s.p.Penalties.window())
	}
}

// Sample draws one token id from logits, which it may modify (penalties), and accepts it.
func (s *Sampler) Sample(logits []float32) int32 {
	if s.p.Penalties.Active() {
		s.hist.apply(logits, s.p.Penalties)
	}
	id := s.draw(logits)
	s.Accept(id)
	return id
}

// draw is Sample's token. At a temperature above 0 it takes one uniform from the
// random source, whether or not the draw needs it (a row of only NaNs and -Infs, say),
// so each token of a sequence has its own and a draw made elsewhere (Ahead) takes the
// same one.
func (s *Sampler) draw(logits []float32) int32 {
	if s.p.Temperature <= 0 || len(logits) == 0 {
		return Greedy(logits)
	}
	u := s.rng.Float64()
	if s.drawsRow(len(logits)) {
		var id int32
		id, s.w = drawRow(logits, s.p.Temperature, u, s.w)
		return id
	}
	if s.drawsNucleus(len(logits)) {
		var id int32
		id, s.w, s.cand = drawNucleus(logits, s.p.Temperature, float64(s.p.TopP), float64(s.p.MinP), u, s.w, s.cand)
		return id
	}
	c := s.filter(logits)
	if len(c) == 0 {
		return Greedy(logits)
	}
	return pick(c, u)
}

// pick draws one of the candidates c (not empty) by their probabilities, with u the
// uniform in [0, 1).
func pick(c []candidate, u float64) int32 {
	var total float64
	for _, x := range c {
		total += x.p
	}
	r := float64(u * total) // rounded here: never fused with the subtraction below
	for _, x := range c {
		r -= x.p
		if r < 0 {
			return x.id
		}
	}
	return c[len(c)-1].id
}

// drawsRow reports whether a draw from a row of vocab logits takes the whole row
// (drawRow): no top-k below the vocabulary, no top-p below 1, no min-p.
func (s *Sampler) drawsRow(vocab int) bool {
	tp := s.p.TopP
	return (s.p.TopK <= 0 || s.p.TopK >= vocab) && (tp <= 0 || tp >= 1) && s.p.MinP <= 0
}

// filter returns the candidates top-k leaves (0 < TopK < vocabulary: drawRow and
// drawNucleus take the other draws), most likely first, with their probabilities after
// top-p and min-p (trim). Top-k selects its k in linear time.
func (s *Sampler) filter(logits []float32) []candidate {
	s.cand = topK(s.cand[:0], logits, s.p.TopK)
	sortCands(s.cand)
	return trim(s.cand, float64(s.p.Temperature), float64(s.p.TopP), float64(s.p.MinP))
}

// trim turns the candidates' logits (c, in the candidates' order) into probabilities
// (the softmax at temperature t) and drops those top-p tp and min-p mp leave out.
func trim(c []candidate, t, tp, mp float64) []candidate {
	topP := tp > 0 && tp < 1
	if len(c) == 0 {
		return c
	}
	softmax(c, t, maxP(c))
	if topP {
		var cum float64
		for i := range c {
			cum += c[i].p
			if cum >= tp {
				c = c[:i+1]
				break
			}
		}
	}
	if mp > 0 && len(c) > 0 { // none left when min-p is above 1
		limit := c[0].p * mp
		for i := range c {
			if c[i].p < limit {
				c = c[:i]
				break
			}
		}
	}
	return c
}
