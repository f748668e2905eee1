package cuda_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/cuda"
	"ember/inference/quant"
)

// TestAttentionMLA2: a prompt's latent attention at depth (its scores past what shared
// memory keeps) on attention_mla2, two tokens a block sharing the key tiles in one pass
// with an online softmax, against attention_mla, a token a block in two passes: the
// probabilities are rounded to f16 before normalisation there and after it here, so the
// outputs agree to that rounding (~1e-5 at these depths; the bound is 1e-4). Odd and
// even token counts (the last block's second token idle), 16 heads and 20 (a second,
// partial head group), tokens at different depths within a block, contexts ending
// mid-tile, and a query large enough that a few positions take most of each row (the
// rounding then relative to the output, which those positions' values make).
func TestAttentionMLA2(t *testing.T) {
	const dim = 576
	for _, c := range []struct {
		n, heads, base, ctx int
		qs, rel             float64 // the query's scale; the bound's part relative to the output
	}{{64, 16, 5000, 5100, 0.2, 1e-4}, {33, 16, 6000, 6100, 0.2, 1e-4}, {41, 20, 4500, 4600, 0.2, 1e-4},
		{40, 16, 8191, 8240, 0.2, 1e-4}, {64, 16, 3000, 3100, 1.5, 2e-3}} {
		name := fmt.Sprintf("%d tokens of %d heads at %d, query scale %g", c.n, c.heads, c.base, c.qs)
		var got [2][]float32
		for k := range 2 {
			be := newOrSkip(t)
			cuda.MLA2(be, k == 0)
			e := &fuseEnv{t: t, be: be, rng: rand.New(rand.NewPCG(11, uint64(c.n)))}
			all := make([]int32, c.ctx)
			for i := range all {
				all[i] = int32(i)
			}
			cache := e.zeros(quant.F16, c.ctx, dim)
			be.SetRows(cache, e.randn(c.ctx, dim, 1), e.ids(all...))
			rows := c.n * c.heads
			var pos []int32
			for h := 0; h < c.heads; h++ {
				for i := 0; i < c.n; i++ {
					pos = append(pos, int32(c.base+i))
				}
			}
			q, p := e.randn(rows, dim, c.qs), e.ids(pos...)
			if err := be.Sync(t.Context()); err != nil {
				t.Fatal(err)
			}
			a := backend.Attention{NHead: 1, NKVHead: 1, HeadDim: dim, VHeadDim: dim, Scale: 0.07, MaxLen: c.base + c.n, HeadGroups: c.heads}
			out := e.zeros(quant.F32, rows, dim)
			be.Attention(out, q, cache, cache, p, a)
			qd := cuda.Queued(be)
			want := []string{"attention_mla2", "attention_mla"}[k]
			if !slices.ContainsFunc(qd, func(s string) bool {
				return strings.HasPrefix(s, want) && !strings.HasPrefix(s, want+"2") && !strings.HasPrefix(s, want+"_")
			}) {
				t.Fatalf("%s: queued %v, wanted %s", name, qd, want)
			}
			got[k] = make([]float32, rows*dim)
			if err := be.ReadF32(t.Context(), out, got[k]); err != nil {
				t.Fatal(err)
			}
			if err := be.Close(); err != nil {
				t.Fatal(err)
			}
		}
		worst := 0.0
		for i, w := range got[1] {
			g := got[0][i]
			d := math.Abs(float64(g - w))
			worst = max(worst, d)
			if d > 1e-4+c.rel*math.Abs(float64(w)) || g != g {
				t.Fatalf("%s: [%d] (head %d, token %d, dim %d): attention_mla2 %g, attention_mla %g", name, i,
					i/dim/c.n, i/dim%c.n, i%dim, g, w)
			}
		}
		t.Logf("%s: largest difference %.2g", name, worst)
	}
}
