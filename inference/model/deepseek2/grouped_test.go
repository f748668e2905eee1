package deepseek2

import (
	"fmt"
	"testing"

	"ember/inference/backend/cuda"
	"ember/inference/model"
	"ember/inference/model/goldentest"
	"ember/inference/synth"
)

// TestCUDAGroupedMoE: batches of more than 64 (token, slot) pairs route on the device
// too, grouped by expert (moe_group) with each expert's rows on the tensor cores
// (mmq_id): no router logits are read back, and the logits are the host path's (which
// groups the pairs on the host) to the bound of batch shapes on the GPU (shapeTol: the
// tensor-core kernels sum a row's block dots in another order). Experts of Q4_K/Q6_K
// rows (whole 256-element steps) and of Q8_0 rows of 128 (a half step), with runs of one
// expert longer than a 64-row tile; and DeepSeek-V2-Lite's case, down experts of Q5_0
// (the q4_k_m mix's fallback for rows that take no K-quant, here 384 = 1.5 steps) next
// to layers of Q8_0 ones, with attn_k_b's Q5_0 head rows 128 wide (q_nope 128), so
// that the per-head products of the long prompt run on mmq_q5_0 too; and every expert
// Q5_0 or Q4_0. The logits are also checked against a model on the mat-vec kernels
// alone (host routing, cuda.NoMMQEnv), which shares no tensor-core kernel with the
// grouped path. cuBLASLt is off throughout (its f16 products of 256+ rows would take the
// long prompt's dense products in all three models and the per-head ones in the
// mat-vec model alone: another rounding, tested by the goldens).
func TestCUDAGroupedMoE(t *testing.T) {
	newCUDA(t).Close()
	t.Setenv(cuda.NoCublasEnv, "1")
	long := make([]int32, 0, 150)
	for len(long) < cap(long) {
		long = append(long, prompt...)
	}
	long = long[:cap(long)]
	for _, v := range []struct {
		name string
		ft   string
		set  func(p *synth.Params)
	}{
		{"grouped-q4_k_m", "q4_k_m", func(p *synth.Params) { p.NExpert, p.NExpertUsed, p.NFFExp = 16, 4, 256 }},
		{"grouped-q8_0", "q8_0", func(p *synth.Params) { p.NExpert, p.NExpertUsed = 8, 4 }},
		{"grouped-q5_0-down", "q4_k_m", func(p *synth.Params) { p.NExpert, p.NExpertUsed, p.NFFExp, p.QKNope = 16, 4, 384, 128 }},
		{"grouped-q5_0", "q5_0", func(p *synth.Params) { p.NExpert, p.NExpertUsed, p.NFFExp = 8, 4, 384 }},
		{"grouped-q4_0", "q4_0", func(p *synth.Params) { p.NExpert, p.NExpertUsed, p.NFFExp = 8, 4, 384 }},
	} {
		t.Run(v.name, func(t *testing.T) {
			path := synthVariant(t, v.name, v.ft, func(p *synth.Params) { v.set(p); p.Name = v.name })
			// The grouped products in each tile width (64 pairs is what the long prompt
			// picks by itself).
			devs := map[string]model.Model{"picked": loadPath(t, path, newCUDA(t))}
			for _, tn := range []string{"8", "16"} {
				t.Setenv(cuda.MoETileEnv, tn)
				devs["tiles of "+tn] = loadPath(t, path, newCUDA(t))
			}
			t.Setenv(cuda.MoETileEnv, "")
			t.Setenv("EMBER_CUDA_HOST_MOE", "1")
			host := loadPath(t, path, newCUDA(t))
			t.Setenv(cuda.NoMMQEnv, "1")
			matVec := loadPath(t, path, newCUDA(t))
			nv := devs["picked"].Params().NVocab
			for _, toks := range [][]int32{prompt, long} {
				n := len(toks)
				f := func(m model.Model) []float32 {
					c, err := m.NewCache(n)
					if err != nil {
						t.Fatal(err)
					}
					defer c.Free()
					return run(t, m, c, model.Batch{Tokens: toks, Pos: positions(0, n), AllLogits: true})
				}
				for _, tile := range []string{"picked", "tiles of 8", "tiles of 16"} {
					dev := devs[tile]
					got := f(dev)
					refs := []struct {
						what string
						m    model.Model
					}{{"the host path", host}, {"the mat-vec kernels", matVec}}
					if n > len(prompt) {
						// Over the long prompt a router near-tie somewhere flips an expert
						// between kernels that share no summation order, and that moves every
						// later position: only the host path (the same kernels but for the
						// routing) is held to the bound there.
						refs = refs[:1]
					}
					for _, ref := range refs {
						want := f(ref.m)
						var worst float64
						for i := 0; i < n; i++ {
							worst = max(worst, goldentest.NMSE(got[i*nv:(i+1)*nv], want[i*nv:(i+1)*nv]))
						}
						t.Logf("%s, %d tokens, %d pairs: worst row NMSE against %s %.3g", tile, n, n*dev.(*Model).cfg.nUsed, ref.what, worst)
						sameRowsTol(t, fmt.Sprintf("%s, %s, %d tokens, against %s", v.name, tile, n, ref.what), got, want, nv, shapeTol)
					}
				}
			}
			for tile, dev := range devs {
				if len(dev.(*Model).host.logits) > 0 {
					t.Errorf("%s: router logits were read back: the grouped device path did not run", tile)
				}
			}
		})
	}
}
