package model

import (
	"context"
	"fmt"

	"ember/inference/backend"
	"ember/inference/gguf"
)

// Decoder is a llama-style decoder-only transformer: token embedding, NLayer pre-norm
// blocks of grouped-query self-attention and a SwiGLU FFN with residual adds, a final
// RMSNorm and the output projection. llama and qwen2 are both this, configured.
type Decoder struct {
	p       Params
	be      backend.Backend
	scratch *Scratch
	owned   []backend.Tensor

	tokEmbd backend.Tensor // token_embd    {NEmbd, NVocab}
	outNorm backend.Tensor // output_norm   {NEmbd}
	output  backend.Tensor // output        {NEmbd, NVocab}, token_embd when tied
	layers  []layer
}

type layer struct {
	attnNorm backend.Tensor // blk.N.attn_norm {NEmbd}
	attn     AttnWeights
	ffnNorm  backend.Tensor // blk.N.ffn_norm  {NEmbd}
	ffn      FFNWeights
}

// LoadDecoder binds a decoder's weights from f on be. With qkvBias the layers must have
// attn_{q,k,v}.bias; without, the biases are bound when the file has them. f must stay
// open until Close.
func LoadDecoder(f *gguf.File, be backend.Backend, p Params, qkvBias bool) (*Decoder, error) {
	emb, ok := f.Tensor("token_embd.weight")
	if !ok || len(emb.Dims) != 2 {
		return nil, fmt.Errorf("model: %s: missing 2-D tensor %q", p.Arch, "token_embd.weight")
	}
	p.NVocab = int(emb.Dims[1])
	l := NewLoader(f, be)
	m := &Decoder{p: p, be: be}
	m.tokEmbd = l.Matrix("token_embd.weight", p.NEmbd, p.NVocab)
	m.outNorm = l.Vector("output_norm.weight", p.NEmbd)
	m.output = m.tokEmbd
	if l.Has("output.weight") {
		m.output = l.Matrix("output.weight", p.NEmbd, p.NVocab)
	}
	switch {
	case l.Has("rope_freqs.weight"):
		m.p.RoPE.Factors = l.Vector("rope_freqs.weight", p.RoPE.Dims/2)
	case p.RoPEScaling == "llama3":
		m.p.RoPE.Factors = l.F32("rope_freqs.weight", LLaMA3Factors(p.LLaMA3, p.RoPE.Base, p.RoPE.Dims))
	}
	qDim, kDim, vDim := p.NHead*p.HeadDim, p.NKVHead*p.HeadDim, p.NKVHead*p.VHeadDim
	for i := 0; i < p.NLayer; i++ {
		name := func(s string) string { return fmt.Sprintf("blk.%d.%s", i, s) }
		m.layers = append(m.layers, layer{
			attnNorm: l.Vector(name("attn_norm.weight"), p.NEmbd),
			attn: AttnWeights{
				Q:   l.Matrix(name("attn_q.weight"), p.NEmbd, qDim),
				K:   l.Matrix(name("attn_k.weight"), p.NEmbd, kDim),
				V:   l.Matrix(name("attn_v.weight"), p.NEmbd, vDim),
				Out: l.Matrix(name("attn_output.weight"), p.NHead*p.VHeadDim, p.NEmbd),
			},
			ffnNorm: l.Vector(name("ffn_norm.weight"), p.NEmbd),
			ffn: FFNWeights{
				Gate: l.Matrix(name("ffn_gate.weight"), p.NEmbd, p.NFF),
				Up:   l.Matrix(name("ffn_up.weight"), p.NEmbd, p.NFF),
				Down: l.Matrix(name("ffn_down.weight"), p.NFF, p.NEmbd),
			},
		})
		if qkvBias || l.Has(name("attn_q.bias")) {
			a := &m.layers[i].attn
			a.QBias = l.Vector(name("attn_q.bias"), qDim)
			a.KBias = l.Vector(name("attn_k.bias"), kDim)
			a.VBias = l.Vector(name("attn_v.bias"), vDim)
		}
	}
	m.owned = l.Owned()
	if err := l.Err(); err != nil {
		m.Close()
		return nil, err
	}
	m.scratch = NewScratch(be)
	DeclareScratch(m.scratch, m.p)
	return m, nil
}

// Params implements Model.
func (m *Decoder) Params() Params { return m.p }

// Backend implements Model.
func (m *Decoder) Backend() backend.Backend { return m.be }

// NewCache implements Model.
func (m *Decoder) NewCache(nCtx int) (*Cache, error) { return NewCache(m.be, m.p, nCtx) }

// Forward implements Model.
func (m *Decoder) Forward(ctx context.Context, c *Cache, b Batch) (backend.Tensor, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	be, s, p := m.be, m.scratch, m.p
	in, err := Inputs(be, s, p, c, b)
	if err != nil {
		return nil, err
	}
	n := in.N
	inpL := s.Get("inpL", n)
	be.GetRows(inpL, m.tokEmbd, in.Tokens)
	cur, ffnInp := s.Get("cur", n), s.Get("ffn_inp", n)
	for il := range m.layers {
		w := &m.layers[il]
		be.RMSNorm(cur, inpL, w.attnNorm, p.RMSEps) // attn_norm
		SelfAttention(be, s, p, &w.attn, c.K[il], c.V[il], cur, in, cur)
		be.Add(ffnInp, cur, inpL)                    // ffn_inp = attn_out + inpL
		be.RMSNorm(cur, ffnInp, w.ffnNorm, p.RMSEps) // ffn_norm
		FeedForward(be, s, &w.ffn, cur, cur, n)
		be.Add(inpL, cur, ffnInp) // l_out = ffn_out + ffn_inp
	}
	return Output(be, s, p, inpL, m.outNorm, m.output, in), nil
}

// Close implements Model.
func (m *Decoder) Close() error {
	if m.scratch != nil {
		m.scratch.Free()
	}
	for _, t := range m.owned {
		m.be.Free(t)
	}
	m.owned = nil
	return nil
}
