package model

import (
	"context"
	"fmt"

	"ember/inference/backend"
	"ember/inference/gguf"
)

// Decoder is a llama-style decoder-only transformer: token embedding, NLayer pre-norm
// blocks of grouped-query self-attention and a SwiGLU FFN with residual adds, a final
// RMSNorm and the output projection. llama and qwen2 are both this, configured. Its
// layers may be split over backends (a Placement): each run of layers on one backend is
// a part with its own weights, scratch and inputs, and the hidden state is copied from
// one part to the next.
type Decoder struct {
	p     Params
	place Placement
	parts []*part

	tokEmbd backend.Tensor // token_embd    {NEmbd, NVocab}, on the first part
	outNorm backend.Tensor // output_norm   {NEmbd}, on the last part
	output  backend.Tensor // output        {NEmbd, NVocab}, token_embd when tied
	layers  []layer
	hidden  []float32 // the hidden state between parts
}

// part is a run of layers [lo, hi) on one backend.
type part struct {
	be      backend.Backend
	p       Params // with the RoPE factors bound on be
	scratch *Scratch
	owned   []backend.Tensor
	lo, hi  int
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
	return LoadDecoderOn(f, Uniform(be, p.NLayer), p, qkvBias)
}

// LoadDecoderOn is LoadDecoder with each layer's weights on its backend in pl: the token
// embedding on the first layer's, the output norm and projection on the last one's.
func LoadDecoderOn(f *gguf.File, pl Placement, p Params, qkvBias bool) (*Decoder, error) {
	emb, ok := f.Tensor("token_embd.weight")
	if !ok || len(emb.Dims) != 2 {
		return nil, fmt.Errorf("model: %s: missing 2-D tensor %q", p.Arch, "token_embd.weight")
	}
	if err := pl.check(p); err != nil {
		return nil, err
	}
	p.NVocab = int(emb.Dims[1])
	m := &Decoder{p: p, place: pl}
	for lo := 0; lo < p.NLayer; {
		hi := lo + 1
		for hi < p.NLayer && pl[hi] == pl[lo] {
			hi++
		}
		m.parts = append(m.parts, &part{be: pl[lo], lo: lo, hi: hi})
		lo = hi
	}
	if err := m.load(f, qkvBias); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

func (m *Decoder) load(f *gguf.File, qkvBias bool) error {
	p := m.p
	qDim, kDim, vDim := p.NHead*p.HeadDim, p.NKVHead*p.HeadDim, p.NKVHead*p.VHeadDim
	first, last := m.parts[0], m.parts[len(m.parts)-1]
	for _, pt := range m.parts {
		l := NewLoader(f, pt.be)
		pt.p = p
		switch {
		case l.Has("rope_freqs.weight"):
			pt.p.RoPE.Factors = l.Vector("rope_freqs.weight", p.RoPE.Dims/2)
		case p.RoPEScaling == "llama3":
			pt.p.RoPE.Factors = l.F32("rope_freqs.weight", LLaMA3Factors(p.LLaMA3, p.RoPE.Base, p.RoPE.Dims))
		}
		if pt == first {
			m.tokEmbd = l.Matrix("token_embd.weight", p.NEmbd, p.NVocab)
		}
		if pt == last {
			m.outNorm = l.Vector("output_norm.weight", p.NEmbd)
			switch {
			case l.Has("output.weight"):
				m.output = l.Matrix("output.weight", p.NEmbd, p.NVocab)
			case pt == first:
				m.output = m.tokEmbd
			default: // tied, and the embedding is on another backend
				m.output = l.Matrix("token_embd.weight", p.NEmbd, p.NVocab)
			}
		}
		for i := pt.lo; i < pt.hi; i++ {
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
		pt.owned = l.Owned()
		if err := l.Err(); err != nil {
			return err
		}
		pt.scratch = NewScratch(pt.be)
		DeclareScratch(pt.scratch, pt.p)
	}
	m.p = last.p
	return nil
}

// Params implements Model.
func (m *Decoder) Params() Params { return m.p }

// Backend implements Model: the last layer's backend, which holds the logits.
func (m *Decoder) Backend() backend.Backend { return m.parts[len(m.parts)-1].be }

// Placement implements Placer.
func (m *Decoder) Placement() Placement { return m.place }

// NewCache implements Model.
func (m *Decoder) NewCache(nCtx int) (*Cache, error) { return NewCacheOn(m.place, m.p, nCtx) }

// Forward implements Model.
func (m *Decoder) Forward(ctx context.Context, c *Cache, b Batch) (backend.Tensor, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var (
		in   *In
		inpL backend.Tensor
		err  error
	)
	for i, pt := range m.parts {
		be, s, p := pt.be, pt.scratch, pt.p
		if in, err = Inputs(be, s, p, c, b); err != nil {
			return nil, err
		}
		n := in.N
		x := s.Get("inpL", n)
		if i == 0 {
			be.GetRows(x, m.tokEmbd, in.Tokens)
		} else { // the hidden state from the part before
			m.hidden = grow(m.hidden, n*p.NEmbd)
			if err := m.parts[i-1].be.ReadF32(ctx, inpL, m.hidden[:n*p.NEmbd]); err != nil {
				return nil, fmt.Errorf("model: hidden state from layer %d: %w", pt.lo-1, err)
			}
			be.WriteF32(x, m.hidden[:n*p.NEmbd])
		}
		inpL = x
		cur, ffnInp := s.Get("cur", n), s.Get("ffn_inp", n)
		for il := pt.lo; il < pt.hi; il++ {
			w := &m.layers[il]
			be.RMSNorm(cur, inpL, w.attnNorm, p.RMSEps) // attn_norm
			SelfAttention(be, s, p, &w.attn, c.K[il], c.V[il], cur, in, cur)
			be.Add(ffnInp, cur, inpL)                    // ffn_inp = attn_out + inpL
			be.RMSNorm(cur, ffnInp, w.ffnNorm, p.RMSEps) // ffn_norm
			FeedForward(be, s, &w.ffn, cur, cur, n)
			be.Add(inpL, cur, ffnInp) // l_out = ffn_out + ffn_inp
		}
	}
	last := m.parts[len(m.parts)-1]
	return Output(last.be, last.scratch, last.p, inpL, m.outNorm, m.output, in), nil
}

// Close implements Model.
func (m *Decoder) Close() error {
	for _, pt := range m.parts {
		if pt.scratch != nil {
			pt.scratch.Free()
		}
		for _, t := range pt.owned {
			pt.be.Free(t)
		}
		pt.owned = nil
	}
	return nil
}

// grow returns b with room for n values.
func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}
