package sample

import (
	"math"
	"slices"
)

// A draw from a whole row (temperature alone: no top-k, top-p or min-p, as an OpenAI
// client that sets only the temperature asks for) adds up to a vocabulary's worth of
// weights. drawRow adds them in a fixed shape that a GPU computes in parallel with the
// same bits (kernels/cuda/sample_row.cu, sample_row_*): each run of RowSegment tokens one
// after another, then the runs' sums pairwise up a binary tree; the draw walks down the
// tree to a run and then along it.

// RowSegment is how many consecutive tokens drawRow adds one after another.
const RowSegment = 32

// rowShare is the fewest tokens of a row each core takes in drawRow.
const rowShare = 16384

// drawRow is the token a uniform u in [0, 1) draws from the softmax at temperature t > 0
// of row, tokens more than negligible below the largest logit left out (rowCut).
// w (reused, returned) holds each token's weight e^((v - max)/t), by expNeg so that the
// device's weights are the same. A row whose largest logit is not finite (only NaNs and
// -Infs, or a +Inf) draws its argmax (Greedy).
func drawRow(row []float32, t float32, u float64, w []float64) (int32, []float64) {
	maxL := maxLogit(row)
	if math.IsInf(float64(maxL), 0) {
		return Greedy(row), w
	}
	tree, p, w := weighRow(row, maxL, t, w)
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

// weighRow is drawRow's weights of row at temperature t (into w, reused, returned) and
// its tree of sums: leaves p+j hold run j's sum (0 past the last run), node k the sum of
// nodes 2k and 2k+1, node 1 the total. maxL is the row's largest logit, finite.
func weighRow(row []float32, maxL, t float32, w []float64) (tree []float64, p int, _ []float64) {
	cut := rowCut(maxL, t)
	t64, m64, cut64 := float64(t), float64(maxL), float64(cut)
	runs := (len(row) + RowSegment - 1) / RowSegment
	p = 1
	for p < runs {
		p *= 2
	}
	tree = make([]float64, 2*p)
	w = slices.Grow(w[:0], len(row))[:len(row)]
	// A large row's runs are shared among the cores (each run's sum is its own, so the
	// bits do not change).
	share(runs, rowShare/RowSegment, func(j0, j1 int) { weighRuns(row, w, tree[p:], j0, j1, cut64, m64, t64) })
	for k := p - 1; k >= 1; k-- {
		tree[k] = tree[2*k] + tree[2*k+1]
	}
	return tree, p, w
}

// rowCut is the lowest logit with a weight in a row whose largest is maxL: negligible
// temperatures below it, rounded apart (never fused).
func rowCut(maxL, t float32) float32 { return maxL - float32(negligible*t) }

// weighRuns is drawRow's weights (into w) and sums (into sums) of row's runs j0 to j1:
// e^((v - m)/t) by expNeg, 0 below cut, each run's added in order.
func weighRuns(row []float32, w, sums []float64, j0, j1 int, cut, m, t float64) {
	lo, hi := j0*RowSegment, min(j1*RowSegment, len(row))
	// The logits as doubles first: converted in the loop below, each conversion (which
	// keeps the rest of its register) would wait for the last token's exponential, and
	// the exponentials would run one after another (~3x slower on amd64).
	for i := lo; i < hi; i++ {
		w[i] = float64(row[i])
	}
	for i := lo; i < hi; i++ {
		e := 0.0
		if v := w[i]; v >= cut { // false for NaN
			e = expNeg((v - m) / t)
		}
		w[i] = e
	}
	for j := j0; j < j1; j++ {
		s := 0.0
		for _, e := range w[j*RowSegment : min((j+1)*RowSegment, len(w))] {
			s += e
		}
		sums[j] = s
	}
}
