package model

import (
	"fmt"
	"math"

	"ember/inference/backend"
	"ember/inference/gguf"
)

// Params are an architecture's hyperparameters, read from `{arch}.*` metadata.
type Params struct {
	Arch      string
	NVocab    int
	NCtxTrain int // context length the model was trained for
	NEmbd     int
	NLayer    int
	NHead     int
	NKVHead   int
	HeadDim   int // key (and query) dims per head
	VHeadDim  int // value dims per head
	NFF       int
	RMSEps    float32
	RoPE      backend.RoPE // Factors is filled by the architecture when it has them
	// RoPEScaling is "", "none", "linear", "yarn" or "llama3"; LLaMA3 holds that scaling's
	// parameters when it has to be computed from metadata.
	RoPEScaling string
	LLaMA3      LLaMA3Scaling
	// SharedKV: V is K, one cache tensor per layer that Attention reads as both k and v
	// (VHeadDim == HeadDim); set by architectures whose values are part of their keys
	// (DeepSeek's latent cache).
	SharedKV bool
	// YaRNLogMul is rope.scaling.yarn_log_multiplier as stored (DeepSeek's converter
	// writes 0.1 x mscale_all_dim); 0 when absent.
	YaRNLogMul float32
}

// LLaMA3Scaling are the parameters of Llama 3.1's rotary frequency scaling.
type LLaMA3Scaling struct {
	Factor, LowFreqFactor, HighFreqFactor float32
	OrigCtx                               int
}

// meta reads typed keys under an architecture prefix, remembering the first error.
type meta struct {
	f    *gguf.File
	arch string
	err  error
}

func (m *meta) key(k string) string { return m.arch + "." + k }

func (m *meta) uint(k string, def int, required bool) int {
	key := m.key(k)
	if !m.f.Has(key) {
		if required && m.err == nil {
			m.err = fmt.Errorf("model: missing metadata key %q", key)
		}
		return def
	}
	v, err := m.f.Uint(key)
	if err == nil && v > math.MaxInt32 {
		err = fmt.Errorf("gguf: key %q: %d is too large", key, v)
	}
	if err != nil {
		if m.err == nil {
			m.err = err
		}
		return def
	}
	return int(v)
}

func (m *meta) float(k string, def float32) float32 {
	key := m.key(k)
	if !m.f.Has(key) {
		return def
	}
	v, err := m.f.Float(key)
	if err != nil {
		if m.err == nil {
			m.err = err
		}
		return def
	}
	return float32(v)
}

func (m *meta) string(k string) string {
	key := m.key(k)
	if !m.f.Has(key) {
		return ""
	}
	v, err := m.f.String(key)
	if err != nil && m.err == nil {
		m.err = err
	}
	return v
}

// ReadParams reads the hyperparameters shared by llama-like architectures and checks
// that they are consistent. The RoPE style is left for the architecture to set.
func ReadParams(f *gguf.File, arch string) (Params, error) {
	m := &meta{f: f, arch: arch}
	p := Params{Arch: arch}
	p.NEmbd = m.uint("embedding_length", 0, true)
	p.NLayer = m.uint("block_count", 0, true)
	p.NHead = m.uint("attention.head_count", 0, true)
	p.NKVHead = m.uint("attention.head_count_kv", p.NHead, false)
	p.NFF = m.uint("feed_forward_length", 0, true)
	p.NCtxTrain = m.uint("context_length", 2048, false)
	p.RMSEps = m.float("attention.layer_norm_rms_epsilon", 1e-5)
	if m.err != nil {
		return p, m.err
	}
	if p.NEmbd <= 0 || p.NLayer <= 0 || p.NHead <= 0 || p.NKVHead <= 0 || p.NFF <= 0 {
		return p, fmt.Errorf("model: %s: embedding %d, layers %d, heads %d/%d, ff %d must all be positive",
			arch, p.NEmbd, p.NLayer, p.NHead, p.NKVHead, p.NFF)
	}
	if p.NHead%p.NKVHead != 0 {
		return p, fmt.Errorf("model: %s: %d heads are not a multiple of %d KV heads", arch, p.NHead, p.NKVHead)
	}
	p.HeadDim = m.uint("attention.key_length", p.NEmbd/p.NHead, false)
	p.VHeadDim = m.uint("attention.value_length", p.HeadDim, false)
	rot := m.uint("rope.dimension_count", p.HeadDim, false)
	p.RoPE = backend.RoPE{
		Dims:    rot,
		HeadDim: p.HeadDim,
		Base:    m.float("rope.freq_base", 10000),
	}
	p.RoPEScaling = m.string("rope.scaling.type")
	factor := m.float("rope.scaling.factor", 0)
	switch p.RoPEScaling {
	case "", "none":
	case "linear":
		if factor > 0 {
			p.RoPE.FreqScale = 1 / factor
		}
	case "yarn":
		// llama.cpp's defaults: ext_factor 1 when YaRN is on; cos and sin end up scaled by
		// 1 + 0.1 ln(factor), which RoPE's AttnFactor 1 gives.
		if factor > 0 {
			p.RoPE.FreqScale = 1 / factor
		}
		p.RoPE.ExtFactor, p.RoPE.AttnFactor = 1, 1
		p.RoPE.BetaFast = m.float("rope.scaling.yarn_beta_fast", 32)
		p.RoPE.BetaSlow = m.float("rope.scaling.yarn_beta_slow", 1)
		p.RoPE.OrigCtx = m.uint("rope.scaling.original_context_length", p.NCtxTrain, false)
		p.YaRNLogMul = m.float("rope.scaling.yarn_log_multiplier", 0)
	case "llama3":
		p.LLaMA3 = LLaMA3Scaling{
			Factor:         factor,
			LowFreqFactor:  m.float("rope.scaling.low_freq_factor", 1),
			HighFreqFactor: m.float("rope.scaling.high_freq_factor", 4),
			OrigCtx:        m.uint("rope.scaling.original_context_length", 8192, false),
		}
	default:
		return p, fmt.Errorf("model: %s: rope scaling %q is not supported", arch, p.RoPEScaling)
	}
	if m.err != nil {
		return p, m.err
	}
	if p.HeadDim <= 0 || p.VHeadDim <= 0 || rot <= 0 || rot%2 != 0 || rot > p.HeadDim || !(p.RoPE.Base > 0) {
		return p, fmt.Errorf("model: %s: head dims %d/%d, rope dims %d, rope base %g are inconsistent",
			arch, p.HeadDim, p.VHeadDim, rot, p.RoPE.Base)
	}
	if !(p.RMSEps > 0) {
		return p, fmt.Errorf("model: %s: rms epsilon %g must be positive", arch, p.RMSEps)
	}
	return p, nil
}

// LLaMA3Factors computes Llama 3.1's per-frequency divisors of theta (what llama.cpp's
// converter stores as rope_freqs): high frequencies unchanged, low ones divided by Factor,
// a smooth blend between.
func LLaMA3Factors(s LLaMA3Scaling, base float32, dims int) []float32 {
	out := make([]float32, dims/2)
	lowWave := float64(s.OrigCtx) / float64(s.LowFreqFactor)
	highWave := float64(s.OrigCtx) / float64(s.HighFreqFactor)
	for i := range out {
		freq := 1 / math.Pow(float64(base), float64(2*i)/float64(dims))
		wave := 2 * math.Pi / freq
		switch {
		case wave < highWave:
			out[i] = 1
		case wave > lowWave:
			out[i] = s.Factor
		default:
			smooth := (float64(s.OrigCtx)/wave - float64(s.LowFreqFactor)) / float64(s.HighFreqFactor-s.LowFreqFactor)
			out[i] = float32(1 / ((1-smooth)/float64(s.Factor) + smooth))
		}
	}
	return out
}
