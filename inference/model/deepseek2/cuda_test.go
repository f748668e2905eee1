package deepseek2

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/cuda"
	"ember/inference/backend/ref"
	"ember/inference/model"
	"ember/inference/model/goldentest"
	"ember/inference/synth"
)

// newCUDA starts a backend on GPU 0, or skips the test where there is no driver or GPU
// (CI has none).
func newCUDA(t *testing.T) backend.Backend {
	t.Helper()
	b, err := cuda.New(cuda.Options{})
	if errors.Is(err, cuda.ErrNoDriver) {
		t.Skipf("skipping the CUDA tests: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Batch shapes on the GPU: with the mat-vec kernels alone (cuda.NoMMQEnv) every row is
// computed the same way whatever the batch, so logits agree to rounding (strictTol).
// The tensor-core kernel that batches of 16 or more rows take sums a row's block dots
// in another order, and on these random models a router near-tie can then pick another
// expert, which moves every later position: the goldens' bound (shapeTol) applies.
const strictTol, shapeTol = 1e-10, 5e-3

// TestCUDA runs the model-level properties on the GPU: full, chunked and token-by-token
// prefill agree, a paged batch equals its sequences alone, latent cache blocks move, for
// the MLA layout and the attn_kv_b one.
func TestCUDA(t *testing.T) {
	newCUDA(t).Close()
	for _, name := range []string{"deepseek2-tiny-f32", "deepseek2-tiny-q8_0", "deepseek2-tiny-kvb-f16"} {
		t.Run("PrefillShapes/"+name, func(t *testing.T) { prefillShapes(t, loadOn(t, name, newCUDA(t)), shapeTol) })
		t.Run("PrefillShapesMatVec/"+name, func(t *testing.T) {
			t.Setenv(cuda.NoMMQEnv, "1")
			prefillShapes(t, loadOn(t, name, newCUDA(t)), strictTol)
		})
	}
	const cudaTol = 1e-6
	for _, name := range []string{"deepseek2-tiny-q4_k_m", "deepseek2-tiny-kvb-f16"} {
		t.Run("PagedBatch/"+name, func(t *testing.T) { pagedBatch(t, loadOn(t, name, newCUDA(t)), cudaTol) })
	}
	t.Run("LatentCacheBlocks", func(t *testing.T) { latentCacheBlocks(t, newCUDA(t)) })
}

// TestCUDAVariants: tiny-deepseek2 files with DeepSeek-V2-Lite's attention widths
// (kv_lora_rank 512, qk_rope 64, qk_nope 128, v_head 128: the MLA cache row is 576 wide,
// the attn_kv_b heads 192/128) and with the variants TestSyntheticVariants covers give
// ref's logits on the GPU (within the goldens' bound), and the same logits there for
// every batch shape.
func TestCUDAVariants(t *testing.T) {
	newCUDA(t).Close()
	wide := func(p *synth.Params) { p.KVLoraRank, p.QKNope, p.QKRope, p.VHeadDim = 512, 128, 64, 128 }
	for _, v := range []struct {
		name   string
		ft     string
		headKV int // the cache's K head width
		set    func(p *synth.Params)
	}{
		{"v2-lite-attn-f16", "f16", 576, wide},
		{"v2-lite-attn-q4_k_m", "q4_k_m", 576, wide},
		{"v2-lite-attn-kvb-f16", "f16", 192, func(p *synth.Params) { wide(p); p.MLALayout = "kv_b" }},
		{"v2-lite-attn-qlora-q8_0", "q8_0", 576, func(p *synth.Params) { wide(p); p.QLoraRank = 96 }},
		{"qlora-sigmoid-bias-norm-f16", "f16", 80, func(p *synth.Params) {
			p.QLoraRank, p.ExpertGating, p.ExpProbsB, p.ExpertWeightsNorm, p.ExpertWeightsScale = 64, "sigmoid", true, true, 2.5
		}},
		{"no-yarn-3-shared-q4_0", "q4_0", 80, func(p *synth.Params) { p.RopeScaling, p.NExpertShared = "none", 3 }},
	} {
		t.Run(v.name, func(t *testing.T) {
			m := againstRef(t, synthVariant(t, v.name, v.ft, v.set), v.headKV)
			prefillShapes(t, m, shapeTol)
		})
		t.Run(v.name+"/MatVec", func(t *testing.T) {
			t.Setenv(cuda.NoMMQEnv, "1")
			m := againstRef(t, synthVariant(t, v.name, v.ft, v.set), v.headKV)
			prefillShapes(t, m, strictTol)
		})
	}
}

// againstRef loads the file at path on the GPU, checks its K head width, and compares
// the prompt's logits with ref's within the goldens' bound; it returns the GPU model.
func againstRef(t *testing.T, path string, headKV int) model.Model {
	t.Helper()
	n := len(prompt)
	full := func(m model.Model) []float32 {
		c, err := m.NewCache(n)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Free()
		return run(t, m, c, model.Batch{Tokens: prompt, Pos: positions(0, n), AllLogits: true})
	}
	want := full(loadPath(t, path, ref.New()))
	m := loadPath(t, path, newCUDA(t))
	if hd := m.Params().HeadDim; hd != headKV {
		t.Fatalf("K head dim %d, want %d", hd, headKV)
	}
	got := full(m)
	var worst float64
	nv := m.Params().NVocab
	for i := 0; i < n; i++ {
		worst = max(worst, goldentest.NMSE(got[i*nv:(i+1)*nv], want[i*nv:(i+1)*nv]))
	}
	t.Logf("worst row NMSE against ref: %.3g", worst)
	sameRowsTol(t, "cuda", got, want, nv, 5e-3)
	return m
}

// synthVariant writes tiny-deepseek2 with set applied as a file of type ft, seeded by
// name, and returns its path.
func synthVariant(t *testing.T, name, ft string, set func(p *synth.Params)) string {
	t.Helper()
	p, err := synth.Base("tiny-deepseek2", "")
	if err != nil {
		t.Fatal(err)
	}
	set(&p)
	path := filepath.Join(t.TempDir(), name+".gguf")
	if _, err := synth.Write(context.Background(), path, p, synth.Options{FileType: ft, Seed: name, Threads: 4}); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCUDADeviceMoE: routing and experts on the device (the CUDA backend's
// RoutedExperts) give the logits of the host path (router logits read back), to
// rounding, with every routing option: softmax and sigmoid gating, selection bias,
// normalised and scaled weights, expert groups, several shared experts, V2-Lite's 64
// experts with 6 used. Both run the mat-vec kernels only (cuda.NoMMQEnv), so that the
// host path's per-expert batches round as the device path's per-pair dots.
func TestCUDADeviceMoE(t *testing.T) {
	newCUDA(t).Close()
	t.Setenv(cuda.NoMMQEnv, "1")
	be := newCUDA(t)
	_, ok := be.(deviceExperts)
	be.Close()
	if !ok {
		t.Fatal("the CUDA backend does not implement deviceExperts")
	}
	for _, v := range []struct {
		name string
		ft   string
		set  func(p *synth.Params)
	}{
		{"tiny-q4_k_m", "q4_k_m", func(p *synth.Params) {}},
		{"tiny-f32-kvb", "f32", func(p *synth.Params) { p.MLALayout = "kv_b" }},
		{"sigmoid-bias-norm-scale-f16", "f16", func(p *synth.Params) {
			p.ExpertGating, p.ExpProbsB, p.ExpertWeightsNorm, p.ExpertWeightsScale = "sigmoid", true, true, 2.5
		}},
		{"groups-q8_0", "q8_0", func(p *synth.Params) { p.ExpertGroups, p.ExpertGroupsUsed, p.ExpertWeightsScale = 4, 2, 1.5 }},
		{"3-shared-q4_0", "q4_0", func(p *synth.Params) { p.NExpertShared = 3 }},
		{"v2-lite-experts-q4_k_m", "q4_k_m", func(p *synth.Params) { p.NExpert, p.NExpertUsed, p.NExpertShared = 64, 6, 2 }},
	} {
		t.Run(v.name, func(t *testing.T) {
			path := synthVariant(t, v.name, v.ft, func(p *synth.Params) { v.set(p); p.Name = v.name })
			dev := loadPath(t, path, newCUDA(t))
			t.Setenv(cuda.HostMoEEnv, "1")
			host := loadPath(t, path, newCUDA(t))
			nv, n := dev.Params().NVocab, len(prompt)
			both := func(f func(m model.Model) []float32) {
				got, want := f(dev), f(host)
				sameRowsTol(t, v.name, got, want, nv, strictTol)
			}
			both(func(m model.Model) []float32 { // a prefill: on the device when its pairs are few
				c, err := m.NewCache(n)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Free()
				return run(t, m, c, model.Batch{Tokens: prompt, Pos: positions(0, n), AllLogits: true})
			})
			both(func(m model.Model) []float32 { // decode, one token at a time
				c, err := m.NewCache(n)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Free()
				return tokenByToken(t, m, c)
			})
			k := dev.(*Model).cfg.nUsed
			if read := len(dev.(*Model).host.logits) > 0; read != (n*k > 64) {
				t.Errorf("router logits read back: %v, with %d pairs in the prefill", read, n*k)
			}
			if len(host.(*Model).host.logits) == 0 {
				t.Error("the host path read no router logits back")
			}
		})
	}
}

// TestCUDALatentKV: the CUDA backend's fused launches of an MLA + MoE layer give bit for
// bit the logits of the separate ones ($EMBER_CUDA_NO_FUSE), over a prompt and decode
// steps after it, on V2-Lite's attention widths and with YaRN (the synthetic files' rope
// scaling): the one-launch latent key write (LatentKV, mla_kv, for five ops), q_pe's
// RoPE and placement (rope2_set), the gathered latent output with its Q8_K rounding
// (get_rows_q8_k), SwiGLU with the down experts' Q8_0 rounding (swiglu_q8), and the
// decode step's paired mat-vecs (q_nope and q_pe, gate and up experts: one mmv_id
// launch each) with the latent projections sharing their rounding, the routed sum with
// the shared experts' output added (moe_sum_add); the Llama fusions too, each also
// bit-equal by its own test.
func TestCUDALatentKV(t *testing.T) {
	newCUDA(t).Close()
	path := synthVariant(t, "latent-kv", "q4_k_m", func(p *synth.Params) { p.KVLoraRank, p.QKNope, p.QKRope, p.VHeadDim = 512, 128, 64, 128 })
	logits := func() []float32 {
		m := loadPath(t, path, newCUDA(t))
		n := len(prompt)
		c, err := m.NewCache(n + 4)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Free()
		out := run(t, m, c, model.Batch{Tokens: prompt, Pos: positions(0, n), AllLogits: true})
		for i := 0; i < 4; i++ {
			out = append(out, run(t, m, c, model.Batch{Tokens: []int32{int32(7 + i)}, Pos: positions(n+i, 1), AllLogits: true})...)
		}
		return out
	}
	fused := logits()
	t.Setenv(cuda.NoFuseEnv, "1")
	unfused := logits()
	if len(fused) != len(unfused) {
		t.Fatalf("%d logits fused, %d not", len(fused), len(unfused))
	}
	for i := range fused {
		if math.Float32bits(fused[i]) != math.Float32bits(unfused[i]) {
			t.Fatalf("logit %d: %v with LatentKV, %v with the five ops", i, fused[i], unfused[i])
		}
	}
}
