package cpu_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"ember/kernels/cpu"
)

// The phased attention (AttnQ16, AttnScores, AttnProbs, AttnValues): with the positions
// and the columns cut into random pieces and the pieces run in random order, every
// head's output has the bits of a single-head Attention call on it, on every path, for
// contiguous and paged caches, up to AttnSplitMax heads; the output's other columns
// and rows stay as they were.
func TestAttnSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(81, 82))
	for _, sh := range []struct{ g, hd, vhd int }{{16, 576, 576}, {1, 64, 64}, {3, 37, 21}, {5, 40, 24}, {cpu.AttnSplitMax, 19, 8}} {
		for _, nkv := range []int{1, 3, 17, 100, 257} {
			for _, paged := range []bool{false, true} {
				attnSplitCheck(t, rng, sh.g, sh.hd, sh.vhd, nkv, paged)
			}
		}
	}
}

func attnSplitCheck(t *testing.T, rng *rand.Rand, g, hd, vhd, nkv int, paged bool) {
	t.Helper()
	ks, vs := hd+3, vhd+5 // the latent cache: K and V rows apart; here two caches
	kr, vr := make([][]uint16, nkv), make([][]uint16, nkv)
	for i := range kr {
		kr[i], vr[i] = elemRandF16(rng, hd), elemRandF16(rng, vhd)
	}
	nrows := nkv
	var rows []int32
	if paged {
		rows, nrows = agPerm(rng, nkv), nkv+9
	}
	garbage := func() uint16 { return uint16(rng.Uint32()) }
	kc, vc := agCache(kr, ks, nrows, rows, garbage), agCache(vr, vs, nrows, rows, garbage)
	q := elemRand(rng, g*hd, 1.5)
	scale := float32(1 / math.Sqrt(float64(hd)))
	ostride := vhd + 7
	want, ss := make([]float32, vhd), make([]float32, cpu.AttentionGroupScratchLen(1, nkv, hd))
	for _, isa := range cpu.Supported() {
		k := cpu.New(isa)
		at := fmt.Sprintf("%v g=%d hd=%d vhd=%d nkv=%d paged=%v", isa, g, hd, vhd, nkv, paged)
		q16, s := make([]float32, g*hd), make([]float32, g*nkv)
		k.AttnQ16(q, q16)
		for _, p := range shuffled(rng, cuts(rng, nkv, 4)) {
			k.AttnScores(q16, g, kc, ks, rows, p[0], p[1], nkv, hd, scale, s)
		}
		for i := range g {
			k.AttnProbs(s[i*nkv : (i+1)*nkv])
		}
		out, check := elemGuarded((g-1)*ostride + vhd)
		for i := range out {
			out[i] = -7
		}
		for _, c := range shuffled(rng, cuts(rng, vhd, 8)) {
			k.AttnValues(s, g, nkv, vc, vs, rows, vhd, c[0], c[1], out, ostride)
		}
		check(t, at)
		for i := range g {
			k.Attention(q[i*hd:(i+1)*hd], kc, ks, vc, vs, rows, nkv, hd, vhd, scale, want, ss)
			for d, w := range want {
				if got := out[i*ostride+d]; math.Float32bits(got) != math.Float32bits(w) {
					t.Fatalf("%s: head %d out[%d] = %g, single head %g", at, i, d, got, w)
				}
			}
			for d := vhd; d < ostride && i < g-1; d++ {
				if out[i*ostride+d] != -7 {
					t.Fatalf("%s: head %d: column %d past the head written", at, i, d)
				}
			}
		}
	}
}

// cuts cuts [0, n) into random pieces whose starts are multiples of m (the last piece
// ends at n).
func cuts(rng *rand.Rand, n, m int) [][2]int {
	var p [][2]int
	for a := 0; a < n; {
		b := min(n, a+m*(1+rng.IntN(5)))
		p = append(p, [2]int{a, b})
		a = b
	}
	return p
}

func shuffled(rng *rand.Rand, p [][2]int) [][2]int {
	rng.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
	return p
}

// TestAttnSplitArgs: bad positions, columns and head counts panic.
func TestAttnSplitArgs(t *testing.T) {
	k := cpu.New(cpu.Supported()[0])
	kc, s, q16, out := make([]uint16, 64*8), make([]float32, 64), make([]float32, 64), make([]float32, 64)
	for name, f := range map[string]func(){
		"t0 not a multiple of 4": func() { k.AttnScores(q16, 1, kc, 8, nil, 2, 8, 8, 8, 1, s) },
		"t1 past nkv":            func() { k.AttnScores(q16, 1, kc, 8, nil, 0, 9, 8, 8, 1, s) },
		"too many heads":         func() { k.AttnScores(q16, cpu.AttnSplitMax+1, kc, 8, nil, 0, 4, 8, 8, 1, s) },
		"c0 not a multiple of 8": func() { k.AttnValues(s, 1, 8, kc, 8, nil, 16, 4, 16, out, 16) },
		"c1 inside a vector":     func() { k.AttnValues(s, 1, 8, kc, 8, nil, 16, 0, 12, out, 16) },
		"short out":              func() { k.AttnValues(s, 2, 8, kc, 8, nil, 16, 0, 16, out[:20], 16) },
		"negative row":           func() { k.AttnValues(s, 1, 2, kc, 8, []int32{0, -1}, 8, 0, 8, out, 8) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
