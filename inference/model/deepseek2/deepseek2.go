// Package deepseek2 is the DeepSeek-V2 architecture (DeepSeek-V2, V2-Lite, V2.5 and the
// files llama.cpp's converter writes for them): pre-norm blocks of multi-head latent
// attention (MLA) and, after the first leading_dense_block_count dense layers, a mixture
// of experts with shared experts, RMSNorm everywhere.
//
// Attention: the query comes from attn_q (or attn_q_a, its norm and attn_q_b when
// q_lora_rank > 0), per head qk_nope dims without rotation and qk_rope dims with it.
// attn_kv_a_mqa compresses the input to kv_lora_rank latent values (normed by
// attn_kv_a_norm) plus one qk_rope key shared by all heads. Files in the current
// ("split") layout carry attn_k_b and attn_v_b, and run like llama.cpp's MLA path: the
// key up-projection is absorbed into the query, so every head attends over the latent
// cache (one KV head of qk_rope + kv_lora_rank dims per position, read as both keys
// and values, Params.SharedKV), and attn_v_b decompresses each head's result. Older
// files carry one attn_kv_b and run as plain multi-head attention over decompressed
// keys and values. RoPE pairs adjacent dims, with
// YaRN scaling; the attention scale is llama.cpp's mscale^2 / sqrt(qk_nope + qk_rope).
//
// MoE: router logits (ffn_gate_inp), softmax or sigmoid gating, the top
// expert_used_count experts per token, optionally renormalised and scaled, each a SwiGLU
// FFN (3-D ffn_{gate,up,down}_exps), their weighted sum plus the shared experts' FFN
// (ffn_*_shexp). Routing is done on the host (see moe.go).
package deepseek2

import (
	"context"
	"fmt"
	"math"

	"ember/inference/backend"
	"ember/inference/gguf"
	"ember/inference/model"
	"ember/inference/quant"
)

// Arch is the GGUF general.architecture this package loads.
const Arch = "deepseek2"

// config holds the deepseek2 hyperparameters beyond model.Params.
type config struct {
	qLoRA, kvLoRA      int // q_lora_rank (0: no q compression), kv_lora_rank
	nope, rope, vd     int // per-head dims: qk_nope, qk_rope, v_head
	mla                bool
	nDense             int // leading dense layers
	nExpert, nUsed     int
	nShared, nFFExp    int
	nGroup, nGroupUsed int     // group-limited routing (expert_group_count > 1): experts in nGroup groups, the best nGroupUsed kept
	wScale             float32 // expert_weights_scale; 0 means none
	wNorm              bool
	sigmoid            bool    // expert_gating_func 2; else softmax
	kqScale            float32 // attention scale with YaRN's mscale
}

// Model is a loaded deepseek2 model.
type Model struct {
	p       model.Params
	cfg     config
	be      backend.Backend
	scratch *model.Scratch // n rows
	heads   *model.Scratch // n*NHead rows: the MLA path's per-head rows
	pairs   *model.Scratch // n*nUsed rows: (token, expert) pairs
	owned   []backend.Tensor

	tokEmbd, outNorm, output backend.Tensor
	// F32 selections (see mla.go): placeKV and placeRope put a latent row and a rope
	// row into a key or query row [rope | latent] (placeRope into every head of an
	// attn_kv_b file's keys); placeV[h] puts head h's values at its columns of [n,
	// NHead*vd].
	placeKV, placeRope backend.Tensor
	dropRope           backend.Tensor // [kv_lora_rank, rope+kv_lora_rank]: the latent part of a row
	placeV             []backend.Tensor
	layers             []layer
	slotNames          []string // scratch names of the per-slot pair indices
	host               moeHost
	normRouted         int // MoE rows whose router logits came from normRouter (tests)
}

type layer struct {
	attnNorm, ffnNorm backend.Tensor
	attn              attnWeights
	dense             *model.FFNWeights // leading dense layers
	moe               *moeWeights
}

// Load binds a deepseek2 GGUF file's weights on be. f must stay open until Close.
func Load(f *gguf.File, be backend.Backend) (model.Model, error) {
	p, err := model.ReadParams(f, Arch)
	if err != nil {
		return nil, err
	}
	p.RoPE.Style = backend.RoPENormal
	cfg, err := readConfig(f, &p)
	if err != nil {
		return nil, err
	}
	emb, ok := f.Tensor("token_embd.weight")
	if !ok || len(emb.Dims) != 2 {
		return nil, fmt.Errorf("model: %s: missing 2-D tensor %q", Arch, "token_embd.weight")
	}
	p.NVocab = int(emb.Dims[1])
	l := model.NewLoader(f, be)
	m := &Model{p: p, cfg: cfg, be: be}
	m.tokEmbd = l.Matrix("token_embd.weight", p.NEmbd, p.NVocab)
	m.outNorm = l.Vector("output_norm.weight", p.NEmbd)
	m.output = m.tokEmbd
	if l.Has("output.weight") {
		m.output = l.Matrix("output.weight", p.NEmbd, p.NVocab)
	}
	m.bindPlacements(l)
	for i := 0; i < p.NLayer; i++ {
		name := func(s string) string { return fmt.Sprintf("blk.%d.%s", i, s) }
		ly := layer{
			attnNorm: l.Vector(name("attn_norm.weight"), p.NEmbd),
			ffnNorm:  l.Vector(name("ffn_norm.weight"), p.NEmbd),
			attn:     m.bindAttn(l, name),
		}
		if i < cfg.nDense {
			ly.dense = &model.FFNWeights{
				Gate: l.Matrix(name("ffn_gate.weight"), p.NEmbd, p.NFF),
				Up:   l.Matrix(name("ffn_up.weight"), p.NEmbd, p.NFF),
				Down: l.Matrix(name("ffn_down.weight"), p.NFF, p.NEmbd),
			}
		} else {
			ly.moe = m.bindMoE(l, name)
		}
		m.layers = append(m.layers, ly)
	}
	m.owned = l.Owned()
	if err := l.Err(); err != nil {
		m.Close()
		return nil, err
	}
	m.declare()
	return m, nil
}

// readConfig reads the deepseek2 keys and fixes p's head sizes to what the cache holds.
func readConfig(f *gguf.File, p *model.Params) (config, error) {
	var err error
	get := func(k string, def int, required bool) int {
		key := Arch + "." + k
		if !f.Has(key) {
			if required && err == nil {
				err = fmt.Errorf("model: missing metadata key %q", key)
			}
			return def
		}
		v, e := f.Uint(key)
		if e == nil && v > math.MaxInt32 {
			e = fmt.Errorf("gguf: key %q: %d is too large", key, v)
		}
		if e != nil && err == nil {
			err = e
		}
		return int(v)
	}
	getF := func(k string, def float32) float32 {
		key := Arch + "." + k
		if !f.Has(key) {
			return def
		}
		v, e := f.Float(key)
		if e != nil && err == nil {
			err = e
		}
		return float32(v)
	}
	c := config{rope: p.RoPE.Dims}
	c.qLoRA = get("attention.q_lora_rank", 0, false)
	if ti, ok := f.Tensor("blk.0.attn_q_a.weight"); ok && c.qLoRA == 0 && len(ti.Dims) == 2 && ti.Dims[1] <= math.MaxInt32 {
		c.qLoRA = int(ti.Dims[1]) // files without the key (llama.cpp then assumes V2-Lite's 0)
	}
	c.kvLoRA = get("attention.kv_lora_rank", 0, true)
	c.nDense = get("leading_dense_block_count", 0, false)
	c.nExpert = get("expert_count", 0, false)
	c.nUsed = get("expert_used_count", 0, false)
	c.nShared = get("expert_shared_count", 0, false)
	c.nFFExp = get("expert_feed_forward_length", 0, false)
	c.nGroup = get("expert_group_count", 0, false)
	c.nGroupUsed = get("expert_group_used_count", 0, false)
	c.wScale = getF("expert_weights_scale", 0)
	gating := get("expert_gating_func", 1, false)
	c.sigmoid = gating == 2
	if key := Arch + ".expert_weights_norm"; f.Has(key) {
		v, e := f.Bool(key)
		if e != nil && err == nil {
			err = e
		}
		c.wNorm = v
	}
	kMLA, vMLA := get("attention.key_length_mla", 0, false), get("attention.value_length_mla", 0, false)
	if err != nil {
		return c, err
	}
	c.mla = kMLA > 0
	if c.mla {
		// The file's MHA view is one KV head of kv_lora_rank + rope keys and
		// kv_lora_rank values: exactly what the latent cache holds.
		c.nope, c.vd = kMLA-c.rope, vMLA
		if p.NKVHead != 1 || p.HeadDim != c.kvLoRA+c.rope || p.VHeadDim != c.kvLoRA {
			return c, fmt.Errorf("model: %s: MLA file with %d KV heads of %d/%d dims, want 1 of %d/%d",
				Arch, p.NKVHead, p.HeadDim, p.VHeadDim, c.kvLoRA+c.rope, c.kvLoRA)
		}
		// The cache holds only the key rows [rope | latent]; attention reads them as
		// values too, and the rope part of its output is dropped.
		p.VHeadDim, p.SharedKV = p.HeadDim, true
	} else {
		c.nope, c.vd = p.HeadDim-c.rope, p.VHeadDim
		if p.NKVHead != p.NHead {
			return c, fmt.Errorf("model: %s: attn_kv_b file with %d KV heads for %d heads", Arch, p.NKVHead, p.NHead)
		}
	}
	if gating > 2 {
		return c, fmt.Errorf("model: %s: expert gating function %d is not supported (1 softmax, 2 sigmoid)", Arch, gating)
	}
	if c.nGroup > 1 && (c.nExpert%c.nGroup != 0 || c.nGroupUsed <= 0 || c.nExpert/c.nGroup < 2) {
		return c, fmt.Errorf("model: %s: %d experts in %d groups, %d used", Arch, c.nExpert, c.nGroup, c.nGroupUsed)
	}
	if c.kvLoRA <= 0 || c.nope <= 0 || c.vd <= 0 || c.qLoRA < 0 || c.nDense > p.NLayer ||
		(c.nDense < p.NLayer && (c.nExpert <= 0 || c.nUsed <= 0 || c.nUsed > c.nExpert || c.nFFExp <= 0)) {
		return c, fmt.Errorf("model: %s: kv_lora_rank %d, qk_nope %d, v_head %d, q_lora_rank %d, %d dense layers of %d, %d of %d experts of %d",
			Arch, c.kvLoRA, c.nope, c.vd, c.qLoRA, c.nDense, p.NLayer, c.nUsed, c.nExpert, c.nFFExp)
	}
	// llama.cpp (deepseek2.cpp, llama-context.cpp): with YaRN the rope's own magnitude
	// correction is cancelled (attn_factor 1 / (1 + 0.1 ln factor)), and the attention
	// scale takes mscale^2 with mscale = 1 + 0.1 mscale_all_dim ln factor, the file
	// storing 0.1 x mscale_all_dim.
	fs := p.RoPE.FreqScale
	if fs == 0 {
		fs = 1
	}
	lnInv := float32(math.Log(float64(1 / fs)))
	attnFactor := float32(1) // without the log multiplier llama.cpp's factors cancel to 1
	if p.RoPE.ExtFactor != 0 && p.YaRNLogMul != 0 {
		attnFactor = 1 / (1 + 0.1*lnInv)
		p.RoPE.AttnFactor = attnFactor
	}
	attnOrg := attnFactor * (1 + 0.1*lnInv)
	mscale := attnOrg * (1 + 0.1*(p.YaRNLogMul/0.1)*lnInv)
	c.kqScale = mscale * mscale / float32(math.Sqrt(float64(c.nope+c.rope)))
	return c, nil
}

// Params implements model.Model.
func (m *Model) Params() model.Params { return m.p }

// Backend implements model.Model.
func (m *Model) Backend() backend.Backend { return m.be }

// NewCache implements model.Model: per layer, K [nCtx, NKVHead*HeadDim] and V [nCtx,
// NKVHead*VHeadDim]; for an MLA file only K, one row of qk_rope + kv_lora_rank values
// per position (V is K).
func (m *Model) NewCache(nCtx int) (*model.Cache, error) { return model.NewCache(m.be, m.p, nCtx) }

// declare names the activation buffers.
func (m *Model) declare() {
	p, c := m.p, m.cfg
	s := model.NewScratch(m.be)
	model.DeclareScratch(s, p)
	s.Declare("q_a", quant.F32, max(c.qLoRA, 1))
	s.Declare("kv_cmpr", quant.F32, c.kvLoRA)
	s.Declare("k_pe", quant.F32, c.rope)
	s.Declare("Ktmp", quant.F32, p.NKVHead*p.HeadDim)
	s.Declare("kqv_out", quant.F32, p.NHead*c.vd)
	s.Declare("kqv_tmp", quant.F32, p.NHead*c.vd)
	s.Declare("moe_logits", quant.F32, max(c.nExpert, 1))
	s.Declare("moe_out", quant.F32, p.NEmbd)
	s.Declare("moe_xn", quant.F32, p.NEmbd)
	s.Declare("moe_tmp", quant.F32, p.NEmbd)
	s.Declare("shexp_gate", quant.F32, max(c.nFFExp*c.nShared, 1))
	s.Declare("shexp_up", quant.F32, max(c.nFFExp*c.nShared, 1))
	s.Declare("shexp_out", quant.F32, p.NEmbd)
	for k := 0; k < c.nUsed; k++ {
		m.slotNames = append(m.slotNames, fmt.Sprintf("moe_slot%d", k))
		s.Declare(m.slotNames[k], quant.I32, 1)
	}
	m.scratch = s

	h := model.NewScratch(m.be)
	h.Declare("pos_h", quant.I32, 1)
	h.Declare("seq_h", quant.I32, 1)
	h.Declare("q_nope", quant.F32, c.nope)
	h.Declare("q_pe", quant.F32, c.rope)
	h.Declare("Qh", quant.F32, c.kvLoRA+c.rope)
	h.Declare("Qtmp", quant.F32, c.kvLoRA+c.rope)
	h.Declare("kqv_h", quant.F32, c.rope+c.kvLoRA)
	h.Declare("kqv_lat", quant.F32, c.kvLoRA)
	h.Declare("v_h", quant.F32, c.vd)
	h.Declare("v_tok", quant.F32, c.vd)
	h.Declare("tok_rows", quant.I32, 1)
	if c.mla {
		h.Declare("lat_rows", quant.I32, c.kvLoRA/gcd(c.rope, c.kvLoRA))
		h.Declare("kv_rows", quant.I32, c.kvLoRA/gcd(c.rope, c.kvLoRA))
		h.Declare("rope_rows", quant.I32, c.rope/gcd(c.rope, c.kvLoRA))
		h.Declare("qrope_rows", quant.I32, c.rope/gcd(c.rope, c.kvLoRA))
	}
	m.heads = h

	pr := model.NewScratch(m.be)
	pr.Declare("ids", quant.I32, 1)
	pr.Declare("x", quant.F32, p.NEmbd)
	pr.Declare("gate", quant.F32, max(c.nFFExp, 1))
	pr.Declare("up", quant.F32, max(c.nFFExp, 1))
	pr.Declare("down", quant.F32, p.NEmbd)
	pr.Declare("w", quant.F32, p.NEmbd)
	pr.Declare("wsel", quant.F32, 1)
	m.pairs = pr
}

// Forward implements model.Model.
func (m *Model) Forward(ctx context.Context, c *model.Cache, b model.Batch) (backend.Tensor, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	be, s, p := m.be, m.scratch, m.p
	in, err := model.Inputs(be, s, p, c, b)
	if err != nil {
		return nil, err
	}
	n := in.N
	if m.cfg.mla {
		if err := m.heads.Reserve(n * p.NHead); err != nil {
			return nil, err
		}
	}
	if err := m.pairs.Reserve(n * max(m.cfg.nUsed, 1)); err != nil {
		return nil, err
	}
	var hin *headInputs
	if m.cfg.mla {
		hin = m.headInputs(b, in)
	}
	inpL := s.Get("inpL", n)
	be.GetRows(inpL, m.tokEmbd, in.Tokens)
	cur, ffnInp := s.Get("cur", n), s.Get("ffn_inp", n)
	for il := range m.layers {
		w := &m.layers[il]
		be.RMSNorm(cur, inpL, w.attnNorm, p.RMSEps) // attn_norm
		if m.cfg.mla {
			m.attnMLA(&w.attn, c.K[il], c.V[il], cur, in, hin)
		} else {
			m.attnKVB(&w.attn, c.K[il], c.V[il], cur, in)
		}
		xn, haveLogits := m.ffnNorm(w, cur, inpL, ffnInp, n) // ffn_inp = attn_out + inpL; ffn_norm
		if w.dense != nil {
			model.FeedForward(be, s, w.dense, cur, cur, n)
		} else if err := m.moeFFN(ctx, w.moe, xn, cur, n, haveLogits); err != nil {
			return nil, fmt.Errorf("model: %s layer %d: %w", Arch, il, err)
		}
		be.Add(inpL, cur, ffnInp) // l_out = ffn_out + ffn_inp
	}
	return model.Output(be, s, p, inpL, m.outNorm, m.output, in), nil
}

// Close implements model.Model.
func (m *Model) Close() error {
	for _, s := range []*model.Scratch{m.scratch, m.heads, m.pairs} {
		if s != nil {
			s.Free()
		}
	}
	for _, t := range m.owned {
		m.be.Free(t)
	}
	m.owned = nil
	return nil
}
