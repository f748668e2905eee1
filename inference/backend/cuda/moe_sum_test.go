package cuda

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// warpSumOrder sums v (at most 64 values, lane l holding v[l] and v[l+32]) as
// moe_route's parallel path does: each lane its own values in order, then the xor
// shuffles of warp_sumd (offsets 16 .. 1), every lane adding its partner's sum.
func warpSumOrder(v []float32) float64 {
	var lane [32]float64
	for l := range lane {
		for u := l; u < len(v); u += 32 {
			lane[l] += float64(v[u])
		}
	}
	for o := 16; o > 0; o >>= 1 {
		var next [32]float64
		for l := range lane {
			next[l] = lane[l] + lane[l^o]
		}
		lane = next
	}
	return lane[0]
}

// TestRoutingSumExact: the property moe_route's parallel softmax sum rests on. With
// every value at least 2^(L-30) (L = ceil(log2 X)), the sum in double in any order has
// the serial sum's bits; below that threshold the orders differ for some rows, which
// is why the kernel checks it and falls back to the serial loop.
func TestRoutingSumExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(59, 1))
	const X = 64
	thr := float32(math.Ldexp(1, 6-30))
	rows := func(spread float64, guard bool) (differ int) {
		for range 20000 {
			v := make([]float32, X)
			for i := range v {
				v[i] = float32(math.Exp(-rng.Float64() * spread))
			}
			v[rng.IntN(X)] = 1 // the max-shifted row's largest
			if guard && slices.ContainsFunc(v, func(x float32) bool { return x < thr }) {
				continue
			}
			var serial float64
			for _, x := range v {
				serial += float64(x)
			}
			if serial != warpSumOrder(v) {
				differ++
			}
		}
		return differ
	}
	if d := rows(16, true); d != 0 {
		t.Errorf("values >= 2^-24: %d rows of 20,000 sum differently in the warp's order", d)
	}
	if d := rows(60, false); d == 0 {
		t.Error("values down to e^-60: no row sums differently in the warp's order (the guard would be needless)")
	}
}
