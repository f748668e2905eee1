package deepseek2

import (
	"testing"

	"ember/inference/backend/cuda"
	"ember/inference/synth"
)

// TestCUDANormRouter (GPU): on a model of DeepSeek-V2-Lite's width (2,048) and expert
// counts, decode rows take the CUDA backend's NormRouter (the router's logits beside the
// FFN norm) in every MoE layer, and their logits have the bits of the same steps with it
// declined ($EMBER_CUDA_NO_NORM_ROUTER: the router after the norm). Session 61's first
// timing of it measured nothing: the norm weights the loader makes were not Weights, so
// it declined every row, and no test looked at the model's path.
func TestCUDANormRouter(t *testing.T) {
	newCUDA(t).Close()
	path := synthVariant(t, "norm-router-2048", "q4_k_m", func(p *synth.Params) {
		p.NEmbd, p.NExpert, p.NExpertUsed, p.NExpertShared, p.Name = 2048, 64, 6, 2, "norm-router-2048"
	})
	decode := func(off bool) ([]float32, int) {
		if off {
			t.Setenv(cuda.NoNormRouterEnv, "1")
		}
		m := loadPath(t, path, newCUDA(t))
		c, err := m.NewCache(len(prompt))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Free()
		return tokenByToken(t, m, c), m.(*Model).normRouted
	}
	got, nOn := decode(false)
	want, nOff := decode(true)
	p, err := synth.Base("tiny-deepseek2", "")
	if err != nil {
		t.Fatal(err)
	}
	moe := p.NLayer - p.NLayerDense
	if nOn != moe*len(prompt) || nOff != 0 {
		t.Fatalf("rows through NormRouter: %d on (want %d MoE layers x %d steps), %d off (want 0)", nOn, moe, len(prompt), nOff)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("logit %d: %v with NormRouter, %v without", i, got[i], want[i])
		}
	}
}
