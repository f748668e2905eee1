package cuda_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/cuda"
	"ember/inference/quant"
)

// TestFFNFused ($EMBER_CUDA_FFN on): a decode row's gate and up (Q4_K), SwiGLU and down
// (Q4_K or Q6_K) as one ffn launch against the chain unfused (cuda.NoFusion): the gate,
// up and SwiGLU values bit for bit, down's outputs within float rounding of the same
// terms added in another order, and three launches fewer a row (quant_q8_k and ffn
// against quant_q8_k, mmv_multi, swiglu_f32, quant_q8_k and the down product). Three
// rows one after another through the same counters and partial sums (each launch must
// leave its counters at zero for the next), at the smallest shapes (one cluster) and
// odd cluster counts; the 8B's widths ran in s68-call3 and s68-call4's benches.
func TestFFNFused(t *testing.T) {
	skipCompat(t)
	t.Setenv(cuda.FFNEnv, "1")
	for _, c := range []struct {
		e, f int
		down quant.Type
	}{{256, 512, quant.Q4_K}, {256, 512, quant.Q6_K}, {768, 2560, quant.Q6_K}, {2048, 5632, quant.Q4_K}} {
		name := fmt.Sprintf("%dx%d %v", c.e, c.f, c.down)
		const rounds = 3
		var got [2][][]float32
		var n [2]int
		for i := range 2 {
			be := newOrSkip(t)
			if i == 1 {
				cuda.NoFusion(be)
			}
			e := &fuseEnv{t: t, be: be, rng: rand.New(rand.NewPCG(7, 8))}
			wg, wu, wd := e.q4k(c.f, c.e), e.q4k(c.f, c.e), e.weight(c.down, c.e, c.f)
			var xs, gs, us, ds []backend.Tensor
			for range rounds {
				xs = append(xs, e.randn(1, c.e, 1))
				gs, us, ds = append(gs, e.zeros(quant.F32, 1, c.f)), append(us, e.zeros(quant.F32, 1, c.f)), append(ds, e.zeros(quant.F32, 1, c.e))
			}
			if err := be.Sync(context.Background()); err != nil {
				t.Fatal(err)
			}
			k0 := cuda.Launches(be)
			for r := range rounds {
				backend.MatMulShared(be, xs[r], []backend.Proj{{Dst: gs[r], W: wg}, {Dst: us[r], W: wu}})
				be.SwiGLU(gs[r], gs[r], us[r])
				be.MatMul(ds[r], wd, gs[r])
			}
			n[i] = cuda.Launches(be) - k0
			for _, o := range append(append(gs, us...), ds...) {
				v := make([]float32, o.Rows()*o.Cols())
				if err := be.ReadF32(context.Background(), o, v); err != nil {
					t.Fatal(err)
				}
				got[i] = append(got[i], v)
			}
			if err := be.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if n[1]-n[0] != 3*rounds {
			t.Errorf("%s: %d launches fused, %d unfused; want %d fewer", name, n[0], n[1], 3*rounds)
		}
		for j := range got[0] {
			if j < 2*rounds { // SwiGLU's values (in g) and up's: the chain's bits
				for i, w := range got[1][j] {
					if g := got[0][j][i]; math.Float32bits(g) != math.Float32bits(w) {
						t.Fatalf("%s: output %d [%d]: fused %g, chain %g", name, j, i, g, w)
					}
				}
				continue
			}
			amax := 0.0
			for _, w := range got[1][j] {
				amax = math.Max(amax, math.Abs(float64(w)))
			}
			for i, w := range got[1][j] {
				if d := math.Abs(float64(got[0][j][i]) - float64(w)); d > 2e-6*amax || math.IsNaN(float64(got[0][j][i])) {
					t.Fatalf("%s: down %d [%d]: fused %g, chain %g (max |out| %g)", name, j-2*rounds, i, got[0][j][i], w, amax)
				}
			}
		}
	}
}
