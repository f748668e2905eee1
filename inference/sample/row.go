package sample

import "math"

// A draw from a whole row (temperature alone: no top-k, top-p or min-p, as an OpenAI
// client that sets only the temperature asks for) adds up to a vocabulary's worth of
// weights. drawRow adds them in a fixed shape that a GPU computes in parallel with the
// same bits (kernels/cuda/sample.cu, sample_all_*): each run of RowSegment tokens one
// after another, then the runs' sums pairwise up a binary tree; the draw walks down the
// tree to a run and then along it.

// RowSegment is how many consecutive tokens drawRow adds one after another.
const RowSegment = 32

// drawRow is the token a uniform u in [0, 1) draws from the softmax at temperature t > 0
// of row, tokens more than negligible below the largest logit left out (see filter).
// w (reused, returned) holds each token's weight e^((v - max)/t), by expNeg so that the
// device's weights are the same. A row whose largest logit is not finite (only NaNs and
// -Infs, or a +Inf) draws its argmax (Greedy).
func drawRow(row []float32, t float32, u float64, w []float64) (int32, []float64) {
	maxL := maxLogit(row)
	if math.IsInf(float64(maxL), 0) {
		return Greedy(row), w
	}
	cut := maxL - float32(negligible*t) // rounded apart: never fused
	t64, m64, cut64 := float64(t), float64(maxL), float64(cut)
	// The logits as doubles first: converted in the loop below, each conversion (which
	// keeps the rest of its register) would wait for the last token's exponential, and
	// the tokens' exponentials would run one after another (~3x slower on amd64).
	w = w[:0]
	for _, v := range row {
		w = append(w, float64(v))
	}
	for i, v := range w {
		e := 0.0
		if v >= cut64 { // false for NaN
			e = expNeg((v - m64) / t64)
		}
		w[i] = e
	}
	// The tree: leaves P+j hold run j's sum (0 past the last run), node k the sum of
	// nodes 2k and 2k+1, node 1 the total.
	runs := (len(w) + RowSegment - 1) / RowSegment
	p := 1
	for p < runs {
		p *= 2
	}
	tree := make([]float64, 2*p)
	for j := range runs {
		s := 0.0
		for _, e := range w[j*RowSegment : min((j+1)*RowSegment, len(w))] {
			s += e
		}
		tree[p+j] = s
	}
	for k := p - 1; k >= 1; k-- {
		tree[k] = tree[2*k] + tree[2*k+1]
	}
	r := float64(u * tree[1]) // rounded here: never fused with a subtraction below
	k := 1
	for k < p {
		l, rt := tree[2*k], tree[2*k+1]
		if r < l || rt == 0 {
			k = 2 * k
			continue
		}
		r -= l
		k = 2*k + 1
	}
	j := k - p
	last := int32(j * RowSegment)
	for i := j * RowSegment; i < min((j+1)*RowSegment, len(w)); i++ {
		e := w[i]
		if e == 0 {
			continue
		}
		last = int32(i)
		if r -= e; r < 0 {
			return int32(i), w
		}
	}
	return last, w // rounding: the run's last token with a weight
}
