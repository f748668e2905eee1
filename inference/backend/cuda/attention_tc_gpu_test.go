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

// TestPrefillOnePass: a prompt's attention at depth on the tensor-core prefill kernel,
// whose tiles past 512 keys take one pass with an online softmax (attention_tc.cu's
// tc_onepass), against the same attention on the other kernels (the reference's
// rounding: probabilities rounded to f16 after the division by the sum, not before).
// Head dims 64 and 128, grouped query heads, a paged cache with its blocks shuffled, rows
// that straddle the switch (a batch whose first tiles take two passes and later ones
// one), an odd row count, and a query large enough that a few positions take most of each
// row. The bound is what the rounding of p allows: 2^-9 of sum p_t |v_t| (the same
// attention over |V|).
func TestPrefillOnePass(t *testing.T) {
	for _, c := range []struct {
		n, nh, nkv, hd, base, bs int
		qs                       float64 // the query's scale
	}{{96, 8, 2, 128, 3000, 0, 0.3}, {77, 8, 2, 64, 480, 16, 0.3}, {64, 4, 1, 128, 4100, 16, 6}} {
		name := fmt.Sprintf("%d rows of %d heads (%d KV, dim %d) at %d, block size %d, query scale %g", c.n, c.nh, c.nkv,
			c.hd, c.base, c.bs, c.qs)
		ctx := c.base + c.n
		var got [2][]float32
		var mag []float32 // the other kernels' attention over |V|: sum of p_t |v_t|
		for k := range 2 {
			be := newOrSkip(t)
			cuda.PrefillAttention(be, k == 0)
			e := &fuseEnv{t: t, be: be, rng: rand.New(rand.NewPCG(5, uint64(c.n)))}
			w := c.nkv * c.hd
			a := backend.Attention{NHead: c.nh, NKVHead: c.nkv, HeadDim: c.hd, VHeadDim: c.hd,
				Scale: float32(1 / math.Sqrt(float64(c.hd))), MaxLen: ctx}
			rows, cacheRows := make([]int32, ctx), ctx // each position's cache row
			for i := range rows {
				rows[i] = int32(i)
			}
			if c.bs > 0 { // the sequence's blocks in a shuffled order
				blocks := (ctx + c.bs - 1) / c.bs
				table := make([]int32, blocks)
				for i, b := range e.rng.Perm(blocks) {
					table[i] = int32(b)
				}
				for i := range rows {
					rows[i] = table[i/c.bs]*int32(c.bs) + int32(i%c.bs)
				}
				tt, err := be.New(quant.I32, 1, blocks)
				if err != nil {
					t.Fatal(err)
				}
				be.WriteI32(tt, table)
				a.Table, a.Seq, a.BlockSize, cacheRows = tt, e.ids(make([]int32, c.n)...), c.bs, blocks*c.bs
			}
			kc, vc := e.zeros(quant.F16, cacheRows, w), e.zeros(quant.F16, cacheRows, w)
			be.SetRows(kc, e.randn(ctx, w, 1), e.ids(rows...))
			vs := e.normals(ctx*w, 1)
			be.SetRows(vc, e.vals(ctx, w, vs), e.ids(rows...))
			pos := make([]int32, c.n)
			for i := range pos {
				pos[i] = int32(c.base + i)
			}
			q := e.randn(c.n, c.nh*c.hd, c.qs)
			out := e.zeros(quant.F32, c.n, c.nh*c.hd)
			if err := be.Sync(t.Context()); err != nil {
				t.Fatal(err)
			}
			be.Attention(out, q, kc, vc, e.ids(pos...), a)
			tc := slices.ContainsFunc(cuda.Queued(be), func(s string) bool { return strings.HasPrefix(s, "attention_tc") })
			if tc != (k == 0) {
				t.Fatalf("%s: queued %v (tensor-core kernel wanted: %v)", name, cuda.Queued(be), k == 0)
			}
			got[k] = make([]float32, c.n*c.nh*c.hd)
			if err := be.ReadF32(t.Context(), out, got[k]); err != nil {
				t.Fatal(err)
			}
			if k == 1 {
				for i, v := range vs {
					vs[i] = float32(math.Abs(float64(v)))
				}
				be.SetRows(vc, e.vals(ctx, w, vs), e.ids(rows...))
				be.Attention(out, q, kc, vc, e.ids(pos...), a)
				mag = make([]float32, len(got[k]))
				if err := be.ReadF32(t.Context(), out, mag); err != nil {
					t.Fatal(err)
				}
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
			// each probability rounded to f16 (relative 2^-11) at another point: 2^-10 of
			// sum p_t |v_t| apart at most, twice that for the sums' order and the division
			if d > 1e-6+float64(mag[i])/512 || g != g {
				t.Fatalf("%s: [%d] (row %d, head %d, dim %d): tensor-core kernel %g, other %g (sum of p |v| %g)", name, i,
					i/(c.nh*c.hd), i/c.hd%c.nh, i%c.hd, g, w, mag[i])
			}
		}
		t.Logf("%s: largest difference %.2g", name, worst)
	}
}
