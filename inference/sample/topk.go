package sample

import (
	"math"
	"slices"
)

// before is the candidates' order: larger logit (or probability) first, lower id on ties.
// It is a strict total order, ids being distinct.
func before(a, b candidate) bool { return a.p > b.p || (a.p == b.p && a.id < b.id) }

func sortCands(c []candidate) {
	slices.SortFunc(c, func(a, b candidate) int {
		if before(a, b) {
			return -1
		}
		if before(b, a) {
			return 1
		}
		return 0
	})
}

// topK returns, in h (reused), the k first valid logits in sorted order, in no
// particular order: a min-heap (under before) of the best so far, which most logits
// fail to enter after one comparison.
func topK(h []candidate, logits []float32, k int) []candidate {
	worse := func(i, j int) bool { return before(h[j], h[i]) } // h[i] comes after h[j]
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			if r := l + 1; r < len(h) && worse(r, l) {
				l = r
			}
			if !worse(l, i) {
				return
			}
			h[i], h[l] = h[l], h[i]
			i = l
		}
	}
	for i, v := range logits {
		if v != v || math.IsInf(float64(v), -1) {
			continue
		}
		x := candidate{int32(i), float64(v)}
		if len(h) < k {
			h = append(h, x)
			for j := len(h) - 1; j > 0; { // up
				p := (j - 1) / 2
				if !worse(j, p) {
					break
				}
				h[j], h[p] = h[p], h[j]
				j = p
			}
			continue
		}
		if float32(h[0].p) >= v && (float32(h[0].p) > v || h[0].id < x.id) {
			continue // the common case: not better than the worst kept
		}
		h[0] = x
		down(0)
	}
	return h
}

// maxLogit is the largest of logits (-Inf when none is a number).
func maxLogit(logits []float32) float32 {
	m := float32(math.Inf(-1))
	for _, v := range logits {
		if v > m {
			m = v
		}
	}
	return m
}

// maxP is the largest p of c.
func maxP(c []candidate) float64 {
	m := c[0].p
	for _, x := range c[1:] {
		m = max(m, x.p)
	}
	return m
}

// softmax turns c's logits into probabilities at temperature t, maxL being the largest
// (expNeg's exponentials: the device's draws do the same operations).
func softmax(c []candidate, t, maxL float64) {
	var sum float64
	for i := range c {
		c[i].p = expNeg((c[i].p - maxL) / t)
		sum += c[i].p
	}
	for i := range c {
		c[i].p /= sum
	}
}
