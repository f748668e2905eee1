package cuda_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/cuda"
	"ember/inference/quant"
)

// TestAttentionLatentBits: DeepSeek's latent attention written without the rope dims
// (AttentionLatent: attention_short576 leaving out each head row's first 64 dims, the
// attn_v_b heads' Q8_K rounding joining it) gives the bits of Attention, the gather of
// the latent dims and the heads' product (get_rows_q8_k), in one launch fewer: one and
// a few tokens of 16 heads, one to 256 positions, both through the same backend (one
// token's: attention_vb576, the heads' products in the attention's launch too).
func TestAttentionLatentBits(t *testing.T) {
	skipCompat(t)
	const dim, skip, heads, ch, vd, ctx = 576, 64, 16, 64, 128, 300
	for _, c := range []struct {
		n   int
		pos []int32 // a token's position (each head's row alike)
	}{{1, []int32{0}}, {1, []int32{99}}, {1, []int32{255}}, {3, []int32{40, 41, 42}}, {5, []int32{200, 201, 202, 203, 204}}} {
		name := fmt.Sprintf("%d tokens at %v", c.n, c.pos)
		be := newOrSkip(t)
		e := &fuseEnv{t: t, be: be, rng: rand.New(rand.NewPCG(7, uint64(c.n)))}
		rows := c.n * heads
		all := make([]int32, ctx)
		for i := range all {
			all[i] = int32(i)
		}
		cache := e.zeros(quant.F16, ctx, dim)
		be.SetRows(cache, e.randn(ctx, dim, 1), e.ids(all...))
		var pos, gather []int32
		maxLen := 0
		for h := 0; h < heads; h++ {
			for i := 0; i < c.n; i++ {
				pos = append(pos, c.pos[i])
				maxLen = max(maxLen, int(c.pos[i])+1)
			}
		}
		for r := 0; r < rows; r++ {
			for j := skip / ch; j < dim/ch; j++ {
				gather = append(gather, int32(r*dim/ch+j))
			}
		}
		q, p, g := e.randn(rows, dim, 0.2), e.ids(pos...), e.ids(gather...)
		a := backend.Attention{NHead: 1, NKVHead: 1, HeadDim: dim, VHeadDim: dim, Scale: 0.07, MaxLen: maxLen, HeadGroups: heads}
		w := e.q4k(heads*vd, dim-skip)
		kqv := e.zeros(quant.F32, rows, dim)
		var lat, out [2]backend.Tensor
		var launches [2]int
		for k := range 2 {
			lat[k], out[k] = e.zeros(quant.F32, rows, dim-skip), e.zeros(quant.F32, rows, vd)
		}
		for k := range 2 {
			k0 := cuda.Launches(be)
			if k == 0 {
				be.Attention(kqv, q, cache, cache, p, a)
				be.GetRows(be.Reshape(lat[0], rows*(dim-skip)/ch, ch), be.Reshape(kqv, rows*dim/ch, ch), g)
			} else if !be.AttentionLatent(lat[1], q, cache, cache, p, a, skip) {
				t.Fatalf("%s: AttentionLatent did not take it", name)
			}
			var gs []backend.Group
			for h := range heads {
				gs = append(gs, backend.Group{Dst: be.View(out[k], h*c.n, c.n), W: be.View(w, h*vd, vd), Row0: h * c.n})
			}
			backend.MatMulGroups(be, lat[k], gs)
			launches[k] = cuda.Launches(be) - k0
		}
		// One token's attention and attn_v_b products are attention_vb576's one launch
		// (latentvb.go): the products' launch goes too.
		if want := 1 + b2i(c.n == 1); launches[0]-launches[1] != want {
			t.Errorf("%s: %d launches with the gather, %d without; want %d fewer", name, launches[0], launches[1], want)
		}
		for j, pair := range [][2]backend.Tensor{lat, out} {
			x, y := e.bits(pair[0]), e.bits(pair[1])
			for i := range x {
				if x[i] != y[i] {
					t.Fatalf("%s: output %d [%d]: gathered %#x, latent %#x", name, j, i, x[i], y[i])
				}
			}
		}
		if err := be.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
