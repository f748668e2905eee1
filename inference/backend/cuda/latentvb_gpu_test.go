package cuda_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/cuda"
	"ember/inference/quant"
)

// TestAttentionVBBits: DeepSeek's latent attention of one token's 16 head rows, the
// heads' attn_v_b products (Q4_K, 128 x 512 views of one weight) and the output
// projection of their outputs side by side, with attention_vb576 taking the attention,
// the products and the projection's Q8_K rounding (the default) against the chain
// ($EMBER_CUDA_VB=off): the attention's rows, the products' rows and the projection bit
// for bit, three steps through the same buffers, up to the 256th position; two tokens
// run the chain in both.
func TestAttentionVBBits(t *testing.T) {
	skipCompat(t)
	const dim, skip, heads, vd, ctx, E = 576, 64, 16, 128, 300, 2048
	for _, c := range []struct {
		pos   []int32 // each step's first token's position
		n     int     // tokens a step
		fused bool
	}{{[]int32{0, 1, 2}, 1, true}, {[]int32{37, 38, 39}, 1, true}, {[]int32{100, 120, 127}, 1, true},
		{[]int32{230, 254, 255}, 1, true}, {[]int32{40, 42, 44}, 2, false}} {
		name := fmt.Sprintf("%d tokens at %v", c.n, c.pos)
		var got [2][]uint32
		for run := range 2 {
			t.Setenv(cuda.VBEnv, []string{"on", "off"}[run]) // each run's own: t.Setenv lasts the test
			be := newOrSkip(t)
			e := &fuseEnv{t: t, be: be, rng: rand.New(rand.NewPCG(5, uint64(c.pos[0])))}
			all := make([]int32, ctx)
			for i := range all {
				all[i] = int32(i)
			}
			cache := e.zeros(quant.F16, ctx, dim)
			be.SetRows(cache, e.randn(ctx, dim, 1), e.ids(all...))
			wv, wo := e.q4k(heads*vd, dim-skip), e.q4k(E, heads*vd)
			rows := c.n * heads
			lat, out, o := e.zeros(quant.F32, rows, dim-skip), e.zeros(quant.F32, rows, vd), e.zeros(quant.F32, c.n, E)
			var res []uint32
			for _, p0 := range c.pos {
				var pos []int32
				for h := 0; h < heads; h++ {
					for i := 0; i < c.n; i++ {
						pos = append(pos, p0+int32(i))
					}
				}
				a := backend.Attention{NHead: 1, NKVHead: 1, HeadDim: dim, VHeadDim: dim, Scale: 0.07,
					MaxLen: int(p0) + c.n, HeadGroups: heads, OneNew: c.n == 1}
				q := e.randn(rows, dim, 0.2)
				if !be.AttentionLatent(lat, q, cache, cache, e.ids(pos...), a, skip) {
					t.Fatalf("%s: AttentionLatent did not take it", name)
				}
				var gs []backend.Group
				for h := range heads {
					gs = append(gs, backend.Group{Dst: be.View(out, h*c.n, c.n), W: be.View(wv, h*vd, vd), Row0: h * c.n})
				}
				backend.MatMulGroups(be, lat, gs)
				if c.n == 1 {
					be.MatMul(o, wo, be.Reshape(out, 1, heads*vd))
				}
				l := strings.Join(cuda.Queued(be), " ")
				if want := run == 0 && c.fused; strings.Contains(l, "attention_vb576") != want ||
					want && strings.Contains(l, "quant_q8_k") {
					t.Fatalf("%s, step at %d (fused %v): launches %s", name, p0, want, l)
				}
				res = append(res, e.bits(lat)...)
				res = append(res, e.bits(out)...)
				res = append(res, e.bits(o)...)
			}
			got[run] = res
			if err := be.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(got[0], got[1]) {
			for i := range got[0] {
				if got[0][i] != got[1][i] {
					t.Fatalf("%s: value %d: fused %#x, chain %#x", name, i, got[0][i], got[1][i])
				}
			}
		}
	}
}
