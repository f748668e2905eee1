package sample

import "math"

// A draw with top-p or min-p and no top-k (an OpenAI client that sends top_p, say) keeps
// a prefix of the row's candidates in their order (larger logit first, lower id on
// ties: TopK's order), so the device can find it from the row's first candidates a
// round at a time, with the host's bits:
//   - each candidate's weight is drawRow's, e^((v - max)/t) by expNeg, and candidates
//     end at drawRow's cut (negligible temperatures below the largest logit);
//   - walking the candidates in order, min-p stops before the first whose weight is
//     below MinP (the largest weight is 1, so that is MinP of the most likely's
//     probability), and top-p stops after the first at which the running sum of the
//     weights reaches TopP times the whole row's total weight, added in drawRow's tree
//     (so the device sums it in parallel);
//   - the draw takes the uniform's share of the kept weights' running sum and walks
//     the kept candidates again, subtracting each weight in order.

// nucleusRound is how many candidates the host's first round takes (the device's first
// is its top k's 256): the nucleus is the same whatever the rounds.
const nucleusRound = 256

// drawsNucleus reports whether a draw from a row of vocab logits keeps a prefix of the
// whole row's candidates (drawNucleus): a temperature, no top-k below the vocabulary,
// and top-p below 1 or min-p above 0.
func (s *Sampler) drawsNucleus(vocab int) bool {
	tp := s.p.TopP
	return s.p.Temperature > 0 && (s.p.TopK <= 0 || s.p.TopK >= vocab) && ((tp > 0 && tp < 1) || s.p.MinP > 0)
}

// drawNucleus is the token a uniform u in [0, 1) draws from row at temperature t > 0
// with top-p tp (0 or 1 and above: off) and min-p mp (0: off), as the block comment
// above defines it; w and c are scratch (reused, returned). A row whose largest logit is
// not finite, or that min-p above 1 leaves empty, draws its argmax (Greedy).
func drawNucleus(row []float32, t float32, tp, mp, u float64, w []float64, c []candidate) (int32, []float64, []candidate) {
	c, n, total, w := nucleus(row, t, tp, mp, w, c)
	if n == 0 {
		return Greedy(row), w, c
	}
	r := float64(u * total) // rounded here: never fused with a subtraction below
	for _, x := range c[:n] {
		if r -= x.p; r < 0 {
			return x.id, w, c
		}
	}
	return c[n-1].id, w, c
}

// nucleus returns the candidates of row in order, the first n of them kept with their
// weights (in p) and total, their running sum: drawNucleus's nucleus. n is 0 when the
// row's largest logit is not finite or min-p above 1 keeps nothing.
func nucleus(row []float32, t float32, tp, mp float64, w []float64, c []candidate) (_ []candidate, n int, total float64, _ []float64) {
	maxL := maxLogit(row)
	if math.IsInf(float64(maxL), 0) {
		return c[:0], 0, 0, w
	}
	topP := tp > 0 && tp < 1
	nw := nucleusWalk{cut: float64(rowCut(maxL, t)), m: float64(maxL), t: float64(t), mp: mp, topP: topP}
	if topP {
		var tree []float64
		tree, _, w = weighRow(row, maxL, t, w)
		nw.target, nw.w = float64(tp*tree[1]), w
	}
	// The first round's candidates decide most draws; the rest of the row only when
	// they do not.
	c = topK(c[:0], row, nucleusRound)
	sortCands(c)
	n, total, done := nw.walk(c, len(c) < nucleusRound)
	if done {
		return c, n, total, w
	}
	// Then the candidates down to a band that holds the nucleus's end by an estimate,
	// and every candidate when the estimate falls short (rounding).
	for band := nw.band(row, w, tp, mp); !done; band = nucleusBands {
		all := band >= nucleusBands
		c = c[:0]
		for i, v := range row {
			if x := float64(v); x >= nw.cut && (all || nw.bandOf(x) <= band) {
				c = append(c, candidate{int32(i), x})
			}
		}
		sortCands(c)
		n, total, done = nw.walk(c, all)
	}
	return c, n, total, w
}

// nucleusBands is how many bands of half a temperature hold the candidates (drawRow's
// cut is negligible = 30 temperatures below the largest logit).
const nucleusBands = 2 * negligible

// bandOf is the band of a candidate's logit v: how many half temperatures it lies
// below the largest logit. It does not decrease as v does, so the candidates of the
// bands up to any band are a prefix of the candidates' order.
func (nw nucleusWalk) bandOf(v float64) int { return int((nw.m - v) / nw.t * 2) }

// band returns a band whose candidates and those above hold the nucleus's end by an
// estimate: top-p's, from the weights w (each row token's; the bands' masses added in
// any order, with a margin), and min-p's, from its logarithm; nucleusBands when none
// is sure.
func (nw nucleusWalk) band(row []float32, w []float64, tp, mp float64) int {
	band := nucleusBands
	if mp > 0 {
		band = min(band, max(int(-2*math.Log(mp))+2, 1))
	}
	if nw.topP {
		var mass [nucleusBands + 1]float64
		for i, v := range row {
			if w[i] > 0 {
				mass[min(nw.bandOf(float64(v)), nucleusBands)] += w[i]
			}
		}
		cum, goal := 0.0, nw.target*(1+1e-9)
		for b, x := range mass {
			if cum += x; cum >= goal {
				band = min(band, b)
				break
			}
		}
	}
	return band
}

// nucleusWalk is drawNucleus's walk along the candidates: the cut, the largest logit
// and the temperature (as doubles), min-p, and top-p's target when it is on, with the
// row's weights (weighRow's: the walk's own) that its total was made of.
type nucleusWalk struct {
	cut, m, t, mp float64
	topP          bool
	target        float64
	w             []float64
}

// walk turns the first candidates of c (sorted; p their logits) into their weights in
// place up to where the nucleus ends, and returns how many it keeps and their running
// sum. done is false when c ran out before the nucleus ended and c is not all of the
// row's candidates (all false): the walk must go on past c.
func (nw nucleusWalk) walk(c []candidate, all bool) (n int, total float64, done bool) {
	for i := range c {
		v := c[i].p
		if !(v >= nw.cut) {
			return i, total, true // the candidates end
		}
		var e float64
		if nw.w != nil {
			e = nw.w[c[i].id]
		} else {
			e = expNeg((v - nw.m) / nw.t)
		}
		c[i].p = e
		if nw.mp > 0 && e < nw.mp {
			return i, total, true
		}
		if total += e; nw.topP && total >= nw.target {
			return i + 1, total, true
		}
	}
	return len(c), total, all
}
