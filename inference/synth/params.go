// Package synth writes synthetic GGUF models: real shapes and metadata (llama, qwen2,
// deepseek2), a filler tokenizer, and random but valid weights of every type of
// llama.cpp's mixes, chosen with inference/convert's rules. The files are benchmark and
// test inputs: speed depends only on shapes and types. It ports the behaviour of
// tools/synth_gguf.py: for its types, a file written with the same settings and seed is
// byte for byte that script's file (see fill.go).
package synth

import (
	"errors"
	"fmt"
	"sort"
)

// Params are a model's hyperparameters and names.
type Params struct {
	Arch                 string  // llama, qwen2 or deepseek2
	NEmbd, NLayer, NHead int     // embedding width, blocks, attention heads
	NHeadKV              int     // KV heads (llama, qwen2); 0: NHead
	HeadDim              int     // 0: NEmbd / NHead
	NFF, NVocab, Ctx     int     // dense FFN width, vocabulary, trained context
	RopeTheta, RMSEps    float64 // RoPE base, RMSNorm epsilon
	Tied                 bool    // no output.weight: the output reuses token_embd
	// FIM makes the vocabulary's last three tokens Qwen's fill-in-the-middle control
	// tokens (<|fim_prefix|>, <|fim_suffix|>, <|fim_middle|>), for tests of infill.
	FIM                      bool
	Name, ChatTemplate, Desc string // general.name, tokenizer.chat_template (optional), general.description

	// deepseek2 (MLA + MoE)
	NLayerDense, NExpert, NExpertUsed, NExpertShared, NFFExp int
	QLoraRank, KVLoraRank, QKNope, QKRope, VHeadDim          int
	RopeScaling                                              string // "none" or "yarn"
	YarnFactor                                               float64
	YarnOrigCtx                                              int
	YarnMScaleAllDim                                         float64 // HF rope_scaling.mscale_all_dim
	ExpertGating                                             string  // "softmax" or "sigmoid"
	ExpertWeightsScale                                       float64
	ExpertWeightsNorm, ExpProbsB                             bool
	ExpertGroups, ExpertGroupsUsed                           int
	MLALayout                                                string // "split" (attn_k_b/attn_v_b) or "kv_b"
}

// DefaultDescription is general.description: it says the weights are random.
const DefaultDescription = "SYNTHETIC random weights for benchmarking (ember synth); not a trained model"

// deepseek2Defaults are DeepSeek-V2-Lite's values.
func deepseek2Defaults(p *Params) {
	p.NLayerDense, p.NExpert, p.NExpertUsed, p.NExpertShared, p.NFFExp = 1, 64, 6, 2, 1408
	p.QLoraRank, p.KVLoraRank, p.QKNope, p.QKRope, p.VHeadDim = 0, 512, 128, 64, 128
	p.RopeScaling, p.YarnFactor, p.YarnOrigCtx, p.YarnMScaleAllDim = "yarn", 40, 4096, 0.707
	p.ExpertWeightsScale, p.ExpertWeightsNorm, p.ExpertGating = 1, false, "softmax"
	p.ExpertGroups, p.ExpertGroupsUsed, p.ExpProbsB, p.MLALayout = 1, 1, false, "split"
}

// Presets are the named shapes.
var Presets = map[string]func() Params{
	// Llama-3.2-1B: tied embeddings, GQA 32/8, head_dim 64
	"llama3.2-1b": func() Params {
		return llama("llama", 2048, 16, 32, 8, 8192, 128256, 131072, 500000, 1e-5, true, "synthetic-llama3.2-1b")
	},
	"llama3.2-3b": func() Params {
		return llama("llama", 3072, 28, 24, 8, 8192, 128256, 131072, 500000, 1e-5, true, "synthetic-llama3.2-3b")
	},
	// Llama-3.1-8B: untied, GQA 32/8
	"llama3.1-8b": func() Params {
		return llama("llama", 4096, 32, 32, 8, 14336, 128256, 131072, 500000, 1e-5, false, "synthetic-llama3.1-8b")
	},
	// DeepSeek-R1-Distill-Qwen-1.5B (Qwen2: q/k/v biases, untied)
	"qwen2-1.5b": func() Params {
		return llama("qwen2", 1536, 28, 12, 2, 8960, 151936, 131072, 10000, 1e-6, false, "synthetic-deepseek-r1-distill-qwen-1.5b")
	},
	// DeepSeek-R1-Distill-Qwen-7B (Qwen2.5-Math-7B's shapes: q/k/v biases, untied)
	"qwen2-7b": func() Params {
		return llama("qwen2", 3584, 28, 28, 4, 18944, 152064, 131072, 10000, 1e-6, false, "synthetic-deepseek-r1-distill-qwen-7b")
	},
	// Qwen2.5-0.5B shapes (tied)
	"qwen2-0.5b": func() Params {
		return llama("qwen2", 896, 24, 14, 2, 4864, 151936, 32768, 1000000, 1e-6, true, "synthetic-qwen2.5-0.5b")
	},
	// a few MB, for tests
	"tiny": func() Params {
		return llama("llama", 256, 2, 4, 2, 768, 512, 2048, 10000, 1e-5, false, "synthetic-tiny")
	},
	// DeepSeek-V2-Lite: MLA without q compression, 64 routed experts (6 used) + 2
	// shared, first layer dense, YaRN x40
	"deepseek-v2-lite": func() Params {
		p := llama("deepseek2", 2048, 27, 16, 0, 10944, 102400, 163840, 10000, 1e-6, false, "synthetic-deepseek-v2-lite")
		deepseek2Defaults(&p)
		return p
	},
	// the same structure and rope scaling, tiny
	"tiny-deepseek2": func() Params {
		p := llama("deepseek2", 256, 3, 4, 0, 512, 512, 163840, 10000, 1e-6, false, "synthetic-tiny-deepseek2")
		deepseek2Defaults(&p)
		p.NExpert, p.NExpertUsed, p.NExpertShared, p.NFFExp = 8, 2, 1, 128
		p.KVLoraRank, p.QKNope, p.QKRope, p.VHeadDim = 64, 32, 16, 32
		return p
	},
}

func llama(arch string, embd, layers, heads, kv, ff, vocab, ctx int, theta, eps float64, tied bool, name string) Params {
	return Params{Arch: arch, NEmbd: embd, NLayer: layers, NHead: heads, NHeadKV: kv, NFF: ff,
		NVocab: vocab, Ctx: ctx, RopeTheta: theta, RMSEps: eps, Tied: tied, Name: name}
}

// PresetNames lists the presets, sorted.
func PresetNames() []string {
	names := make([]string, 0, len(Presets))
	for n := range Presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Base returns the starting point that flags then override: the preset's values, or
// with no preset the script's defaults (llama, RoPE base 10000, eps 1e-5, untied, context
// 4096, name "synthetic", shapes unset). arch, when not empty, replaces the architecture;
// a deepseek2 model not from a deepseek2 preset gets DeepSeek-V2-Lite's MLA and MoE
// values.
func Base(preset, arch string) (Params, error) {
	var p Params
	if preset != "" {
		mk, ok := Presets[preset]
		if !ok {
			return p, fmt.Errorf("synth: unknown preset %q (have %v)", preset, PresetNames())
		}
		p = mk()
	} else {
		p = Params{Arch: "llama", RopeTheta: 10000, RMSEps: 1e-5, Ctx: 4096, Name: "synthetic"}
	}
	if arch != "" {
		p.Arch = arch
	}
	if p.Arch == "deepseek2" && p.MLALayout == "" {
		deepseek2Defaults(&p)
	}
	p.Desc = DefaultDescription
	return p, nil
}

// check validates p and fills the derived defaults (NHeadKV, HeadDim), with the errors
// the script gives.
func (p *Params) check() error {
	switch p.Arch {
	case "llama", "qwen2", "deepseek2":
	default:
		return fmt.Errorf("synth: unknown architecture %q (want llama, qwen2 or deepseek2)", p.Arch)
	}
	var missing []string
	for _, f := range []struct {
		name string
		v    int
	}{{"n-embd", p.NEmbd}, {"n-layer", p.NLayer}, {"n-head", p.NHead}, {"n-ff", p.NFF}, {"n-vocab", p.NVocab}} {
		if f.v <= 0 {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("synth: missing hyperparameters (give a preset or flags): %v", missing)
	}
	if p.NVocab < 3+256+1 {
		return errors.New("synth: n-vocab must be >= 260 (3 specials + 256 byte tokens + 1)")
	}
	if p.Ctx < 0 || p.HeadDim < 0 || p.NHeadKV < 0 {
		return errors.New("synth: ctx, head-dim and n-head-kv must not be negative")
	}
	if p.Arch == "deepseek2" {
		return p.checkDeepseek2()
	}
	if p.NHeadKV == 0 {
		p.NHeadKV = p.NHead
	}
	if p.HeadDim == 0 {
		if p.NEmbd%p.NHead != 0 {
			return errors.New("synth: n-embd not divisible by n-head: give -head-dim")
		}
		p.HeadDim = p.NEmbd / p.NHead
	}
	if p.NHead%p.NHeadKV != 0 {
		return errors.New("synth: n-head must be a multiple of n-head-kv")
	}
	return nil
}

// checkDeepseek2 rejects hyperparameters llama.cpp would reject.
func (p *Params) checkDeepseek2() error {
	if p.NLayerDense < 0 || p.NLayerDense > p.NLayer {
		return errors.New("synth: n-layer-dense must be in [0, n-layer]")
	}
	if p.NLayerDense < p.NLayer && (p.NExpert < 1 || p.NExpertUsed < 1 || p.NExpertUsed > p.NExpert) {
		return errors.New("synth: MoE layers need n-expert >= 1 and 1 <= n-expert-used <= n-expert")
	}
	if p.QKNope < 1 || p.QKRope < 2 || p.QKRope%2 != 0 || p.KVLoraRank < 1 {
		return errors.New("synth: need qk-nope-dim >= 1, an even qk-rope-dim >= 2 and kv-lora-rank >= 1")
	}
	if p.VHeadDim < 1 || p.NFFExp < 0 || p.NExpertShared < 0 || p.QLoraRank < 0 {
		return errors.New("synth: need v-head-dim >= 1 and no negative sizes")
	}
	g, gu := p.ExpertGroups, p.ExpertGroupsUsed
	if g > 1 && (p.NExpert%g != 0 || gu <= 0 || gu >= g) {
		return errors.New("synth: expert groups: n-expert must divide into groups and 0 < groups-used < groups")
	}
	if p.NExpert > 0 && g >= p.NExpert {
		return errors.New("synth: expert groups must be fewer than experts")
	}
	if _, ok := gatingFuncs[p.ExpertGating]; !ok {
		return fmt.Errorf("synth: expert gating %q, want softmax or sigmoid", p.ExpertGating)
	}
	switch {
	case p.RopeScaling != "none" && p.RopeScaling != "yarn":
		return fmt.Errorf("synth: rope scaling %q, want none or yarn", p.RopeScaling)
	case p.MLALayout != "split" && p.MLALayout != "kv_b":
		return fmt.Errorf("synth: MLA layout %q, want split or kv_b", p.MLALayout)
	}
	return nil
}

// gatingFuncs are llama.cpp's LLAMA_EXPERT_GATING_FUNC_TYPE values.
var gatingFuncs = map[string]uint32{"softmax": 1, "sigmoid": 2}
