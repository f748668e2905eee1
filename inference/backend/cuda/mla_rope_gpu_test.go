package cuda_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/cuda"
	"ember/inference/quant"
)

// TestMLAKVRoPEBits: mla_kv_rope (a decode step's latent cache row and q_pe's rotation
// into the query rows' rope dims, one launch) gives the bits of mla_kv and rope2_set
// ($EMBER_CUDA_NO_MLA_ROPE) in the cache, the query rows and the rotated q_pe, one launch
// fewer: DeepSeek-V2-Lite's widths, plain and YaRN RoPE (V2's), one and three tokens.
func TestMLAKVRoPEBits(t *testing.T) {
	const H, rope, lat, ch, ctx = 16, 64, 512, 64, 40
	ropes := []backend.RoPE{
		{Style: backend.RoPENormal, Dims: rope, HeadDim: rope + lat, Base: 10000},
		{Style: backend.RoPENormal, Dims: rope, HeadDim: rope + lat, Base: 10000, FreqScale: 0.025, ExtFactor: 1,
			AttnFactor: 1.2, BetaFast: 32, BetaSlow: 1, OrigCtx: 4096},
	}
	for ri, r := range ropes {
		for _, n := range []int{1, 3} {
			name := fmt.Sprintf("rope %d, %d tokens", ri, n)
			var got [2][][]uint32
			var launches [2]int
			for k := range 2 {
				// read by the backend's first op; t.Setenv's value lasts to the test's end,
				// so the fused side sets it empty (off) again
				t.Setenv(cuda.NoMLARoPEEnv, []string{"", "1"}[k])
				be := newOrSkip(t)
				e := &fuseEnv{t: t, be: be, rng: rand.New(rand.NewPCG(11, uint64(n)))}
				cache := e.zeros(quant.F16, ctx, rope+lat)
				kv, kpe, norm := e.randn(n, lat, 1), e.randn(n, rope, 1), e.randn(1, lat, 1)
				var pos, slots, hpos, qrows []int32
				for i := 0; i < n; i++ {
					pos, slots = append(pos, int32(7+i)), append(slots, int32(ctx-1-3*i))
				}
				for h := 0; h < H; h++ {
					for i := 0; i < n; i++ {
						hpos = append(hpos, pos[i])
						qrows = append(qrows, int32((h*n+i)*(rope+lat)/ch))
					}
				}
				pt, st, hp, qr := e.ids(pos...), e.ids(slots...), e.ids(hpos...), e.ids(qrows...)
				qpe, qh := e.randn(n*H, rope, 1), e.zeros(quant.F32, n*H, rope+lat)
				if err := be.Sync(context.Background()); err != nil {
					t.Fatal(err)
				}
				k0 := cuda.Launches(be)
				if !be.LatentKV(cache, kv, kpe, norm, 1e-6, pt, st, r) {
					t.Fatalf("%s: LatentKV declined", name)
				}
				rq := r
				rq.HeadDim = rope
				be.RoPE(qpe, hp, rq)
				be.SetRows(be.Reshape(qh, n*H*(rope+lat)/ch, ch), qpe, qr)
				launches[k] = cuda.Launches(be) - k0
				for _, o := range []backend.Tensor{cache, qh, qpe} {
					got[k] = append(got[k], e.bits(o))
				}
				if err := be.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if launches[1]-launches[0] != 1 {
				t.Errorf("%s: %d launches fused, %d apart; want one fewer", name, launches[0], launches[1])
			}
			for j := range got[0] {
				for i, w := range got[1][j] {
					if g := got[0][j][i]; g != w {
						t.Fatalf("%s: output %d [%d]: fused %#x, apart %#x", name, j, i, g, w)
					}
				}
			}
		}
	}
}
