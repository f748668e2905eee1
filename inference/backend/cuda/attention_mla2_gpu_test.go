package cuda_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/cuda"
	"ember/inference/quant"
)

// TestAttentionMLA2: a prompt's latent attention at depth (its scores past what shared
// memory keeps) on attention_mla2, two tokens a block sharing the key tiles in one pass
// with an online softmax, against attention_mla, a token a block in two passes: the
// probabilities are rounded to f16 before normalisation there and after it here, so the
// outputs agree to that rounding, 2^-10 of sum p_t |v_t| (mlaMag, on the host) at most;
// the bound is twice that. Odd and even token counts (the last block's second token
// idle), 16 heads and 20 (a second, partial head group), tokens at different depths
// within a block, contexts ending mid-tile, and a query large enough that a few positions
// take most of each row.
func TestAttentionMLA2(t *testing.T) {
	const dim = 576
	for _, c := range []struct {
		n, heads, base, ctx int
		qs                  float64 // the query's scale
	}{{64, 16, 5000, 5100, 0.2}, {33, 16, 6000, 6100, 0.2}, {41, 20, 4500, 4600, 0.2}, {40, 16, 8191, 8240, 0.2},
		{64, 16, 3000, 3100, 1.5}} {
		name := fmt.Sprintf("%d tokens of %d heads at %d, query scale %g", c.n, c.heads, c.base, c.qs)
		var got [2][]float32
		var kv, qv []float32 // the cache's and the query's values
		for k := range 2 {
			be := newOrSkip(t)
			if cuda.SmemLimited(be) {
				be.Close()
				t.Skip("attention_mla and attention_mla2 need more shared memory than this GPU's")
			}
			cuda.MLA2(be, k == 0)
			e := &fuseEnv{t: t, be: be, rng: rand.New(rand.NewPCG(11, uint64(c.n)))}
			all := make([]int32, c.ctx)
			for i := range all {
				all[i] = int32(i)
			}
			cache := e.zeros(quant.F16, c.ctx, dim)
			kv = e.normals(c.ctx*dim, 1)
			be.SetRows(cache, e.vals(c.ctx, dim, kv), e.ids(all...))
			rows := c.n * c.heads
			var pos []int32
			for h := 0; h < c.heads; h++ {
				for i := 0; i < c.n; i++ {
					pos = append(pos, int32(c.base+i))
				}
			}
			qv = e.normals(rows*dim, c.qs)
			q, p := e.vals(rows, dim, qv), e.ids(pos...)
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
		mag := mlaMag(kv, qv, dim, c.n, c.base, 0.07)
		worst := 0.0
		for i, w := range got[1] {
			g := got[0][i]
			d := math.Abs(float64(g - w))
			worst = max(worst, d)
			if d > 1e-6+mag[i]/512 || g != g {
				t.Fatalf("%s: [%d] (head %d, token %d, dim %d): attention_mla2 %g, attention_mla %g (sum of p |v| %g)", name,
					i, i/dim/c.n, i/dim%c.n, i%dim, g, w, mag[i])
			}
		}
		t.Logf("%s: largest difference %.2g", name, worst)
	}
}

// mlaMag is, for each output of TestAttentionMLA2's rows (head-major: row h*n + i is
// token i's head h, at position base + i), sum p_t |v_t| in float64 over the row's
// positions, the cache's rows kv (keys and values) and the queries qv of dim values.
func mlaMag(kv, qv []float32, dim, n, base int, scale float64) []float64 {
	rows := len(qv) / dim
	out := make([]float64, rows*dim)
	var wg sync.WaitGroup
	for w := range runtime.NumCPU() {
		wg.Go(func() {
			for r := w; r < rows; r += runtime.NumCPU() {
				q, nk := qv[r*dim:(r+1)*dim], base+r%n+1
				s, m := make([]float64, nk), math.Inf(-1)
				for t := range nk {
					var d float64
					for j, x := range kv[t*dim : (t+1)*dim] {
						d += float64(q[j]) * float64(x)
					}
					s[t] = d * scale
					m = max(m, s[t])
				}
				var l float64
				for t := range s {
					s[t] = math.Exp(s[t] - m)
					l += s[t]
				}
				o := out[r*dim : (r+1)*dim]
				for t, p := range s {
					for j, x := range kv[t*dim : (t+1)*dim] {
						o[j] += p / l * math.Abs(float64(x))
					}
				}
			}
		})
	}
	wg.Wait()
	return out
}
