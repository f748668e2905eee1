package cuda_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/cuda"
	"ember/inference/quant"
)

// TestAbsorbBits ($EMBER_CUDA_ABSORB on): a decode row's q_nope (Q4_K, 16 heads x 128
// rows of 2,048, and of 512) and attn_k_b's per-head products (Q8_0 views of one
// weight, into the latent dims of [rope 64 | latent 512] rows, as DeepSeek-V2's query
// is laid out) as absorb_q4_k_q8_0's one launch against the chain (cuda.NoFusion): q_nope
// and the query rows bit for bit, the rope columns untouched, three steps through the
// same buffers.
func TestAbsorbBits(t *testing.T) {
	skipCompat(t)
	t.Setenv(cuda.AbsorbEnv, "1")
	const H, qn, rope, lat = 16, 128, 64, 512
	for _, E := range []int{2048, 512} {
		var got [2][]uint32
		for run := range 2 {
			be := newOrSkip(t)
			if run == 1 {
				cuda.NoFusion(be)
			}
			e := &fuseEnv{t: t, be: be, rng: rand.New(rand.NewPCG(11, uint64(E)))}
			wq, kb := e.weight(quant.Q4_K, H*qn, E), e.weight(quant.Q8_0, H*lat, qn)
			var out []uint32
			for step := range 3 {
				cur, q := e.randn(1, E, 1), e.zeros(quant.F32, 1, H*qn)
				qh := e.randn(H, rope+lat, 1) // the rope columns must keep these values
				rows := be.Reshape(qh, H*(rope+lat)/rope, rope)
				per := (rope + lat) / rope
				be.MatMul(q, wq, cur)
				var groups []backend.Group
				for h := 0; h < H; h++ {
					d := be.Reshape(be.View(rows, h*per+1, per-1), 1, lat)
					groups = append(groups, backend.Group{Dst: d, W: be.View(kb, h*lat, lat), Row0: h})
				}
				backend.MatMulGroups(be, be.Reshape(q, H, qn), groups)
				if l := strings.Join(cuda.Queued(be), " "); (run == 0) != strings.Contains(l, "absorb_q4_k_q8_0") {
					t.Fatalf("E %d step %d (fusion off %v): launches %s", E, step, run == 1, l)
				}
				out = append(out, e.bits(q)...)
				out = append(out, e.bits(qh)...)
			}
			got[run] = out
			if err := be.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(got[0], got[1]) {
			for i := range got[0] {
				if got[0][i] != got[1][i] {
					t.Fatalf("E %d: value %d: fused %#x, chain %#x", E, i, got[0][i], got[1][i])
				}
			}
		}
	}
}
