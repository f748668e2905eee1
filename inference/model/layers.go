package model

import (
	"fmt"

	"ember/inference/backend"
	"ember/inference/quant"
)

// AttnWeights are one layer's self-attention projections; biases are nil when absent.
type AttnWeights struct {
	Q, K, V, Out        backend.Tensor
	QBias, KBias, VBias backend.Tensor
	qkv                 [3]backend.Proj // reused so a decode step allocates nothing
}

// FFNWeights are one layer's SwiGLU feed-forward projections.
type FFNWeights struct {
	Gate, Up, Down backend.Tensor
	gateUp         [2]backend.Proj
}

// DeclareScratch declares the activation buffers the shared layers use, by the names
// llama.cpp gives these intermediates.
func DeclareScratch(s *Scratch, p Params) {
	s.Declare("inp_tokens", quant.I32, 1)
	s.Declare("inp_pos", quant.I32, 1)
	s.Declare("inpL", quant.F32, p.NEmbd)
	s.Declare("cur", quant.F32, p.NEmbd)
	s.Declare("ffn_inp", quant.F32, p.NEmbd)
	s.Declare("Qcur", quant.F32, p.NHead*p.HeadDim)
	s.Declare("Kcur", quant.F32, p.NKVHead*p.HeadDim)
	s.Declare("Vcur", quant.F32, p.NKVHead*p.VHeadDim)
	s.Declare("kqv", quant.F32, p.NHead*p.VHeadDim)
	s.Declare("ffn_gate", quant.F32, p.NFF)
	s.Declare("ffn_up", quant.F32, p.NFF)
	s.Declare("result_norm", quant.F32, p.NEmbd)
	s.Declare("result_output", quant.F32, p.NVocab)
}

// Inputs checks a batch against the cache, reserves scratch for it and uploads its
// token ids and positions. It returns the batch size and the two I32 inputs.
func Inputs(be backend.Backend, s *Scratch, p Params, c *Cache, b Batch) (n int, tokens, pos backend.Tensor, err error) {
	n = len(b.Tokens)
	if n == 0 || len(b.Pos) != n {
		return 0, nil, nil, fmt.Errorf("model: batch of %d tokens with %d positions", n, len(b.Pos))
	}
	for i, t := range b.Tokens {
		if t < 0 || int(t) >= p.NVocab {
			return 0, nil, nil, fmt.Errorf("model: token %d at batch row %d is outside the vocabulary of %d", t, i, p.NVocab)
		}
		if b.Pos[i] < 0 || int(b.Pos[i]) >= c.Size {
			return 0, nil, nil, fmt.Errorf("%w: position %d, cache of %d", ErrContextFull, b.Pos[i], c.Size)
		}
	}
	if err := s.Reserve(n); err != nil {
		return 0, nil, nil, err
	}
	tokens, pos = s.Get("inp_tokens", n), s.Get("inp_pos", n)
	be.WriteI32(tokens, b.Tokens)
	be.WriteI32(pos, b.Pos)
	return n, tokens, pos, nil
}

// SelfAttention projects cur [n, NEmbd] to Q, K and V (adding biases when present),
// rotates Q and K, stores K and V into the layer's cache rows at pos, attends over the
// cache and projects back, writing [n, NEmbd] into out (which may be cur).
func SelfAttention(be backend.Backend, s *Scratch, p Params, w *AttnWeights, kCache, vCache, cur, pos, out backend.Tensor, n int) {
	q, k, v := s.Get("Qcur", n), s.Get("Kcur", n), s.Get("Vcur", n)
	w.qkv = [3]backend.Proj{{Dst: q, W: w.Q}, {Dst: k, W: w.K}, {Dst: v, W: w.V}}
	backend.MatMulShared(be, cur, w.qkv[:])
	if w.QBias != nil {
		be.Add(q, q, w.QBias)
	}
	if w.KBias != nil {
		be.Add(k, k, w.KBias)
	}
	if w.VBias != nil {
		be.Add(v, v, w.VBias)
	}
	be.RoPE(q, pos, p.RoPE)
	be.RoPE(k, pos, p.RoPE)
	be.SetRows(kCache, k, pos)
	be.SetRows(vCache, v, pos)
	kqv := s.Get("kqv", n)
	be.Attention(kqv, q, kCache, vCache, pos, backend.Attention{
		NHead: p.NHead, NKVHead: p.NKVHead, HeadDim: p.HeadDim, VHeadDim: p.VHeadDim,
		Scale: 1 / sqrtf(float32(p.HeadDim)),
	})
	be.MatMul(out, w.Out, kqv)
}

// FeedForward is the SwiGLU FFN: out = down(silu(gate(cur)) * up(cur)); out may be cur.
func FeedForward(be backend.Backend, s *Scratch, w *FFNWeights, cur, out backend.Tensor, n int) {
	gate, up := s.Get("ffn_gate", n), s.Get("ffn_up", n)
	w.gateUp = [2]backend.Proj{{Dst: gate, W: w.Gate}, {Dst: up, W: w.Up}}
	backend.MatMulShared(be, cur, w.gateUp[:])
	be.SwiGLU(gate, gate, up)
	be.MatMul(out, w.Down, gate)
}

// Output applies the final norm and the output projection to the last row of x, or to
// every row when all is set, and returns the logits [rows, NVocab].
func Output(be backend.Backend, s *Scratch, p Params, x, norm, output backend.Tensor, n int, all bool) backend.Tensor {
	rows := n
	if !all {
		x, rows = s.Last("inpL", n), 1
	}
	cur := s.Get("result_norm", rows)
	be.RMSNorm(cur, x, norm, p.RMSEps)
	logits := s.Get("result_output", rows)
	be.MatMul(logits, output, cur)
	return logits
}
