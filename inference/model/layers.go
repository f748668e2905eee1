package model

import (
	"errors"
	"fmt"
	"slices"

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
	s.Declare("inp_slots", quant.I32, 1)
	s.Declare("inp_seq", quant.I32, 1)
	s.Declare("inp_out_ids", quant.I32, 1)
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

// In is one batch's inputs, uploaded to the backend by Inputs.
type In struct {
	N                  int            // tokens
	Tokens, Pos, Slots backend.Tensor // I32 [N]: ids, positions, cache rows K/V go to
	// Attn carries the paging fields of the cache (Table, Seq, BlockSize) for
	// backend.Attention; the caller fills in the heads and scale.
	Attn backend.Attention
	// OutIDs lists the rows that get logits (nil: the last row, or all of them);
	// OutRows is how many rows the logits have.
	OutIDs  backend.Tensor
	OutRows int
}

// Inputs checks a batch against the cache, reserves scratch for it and uploads its
// token ids, positions, cache rows and block tables.
func Inputs(be backend.Backend, s *Scratch, p Params, c *Cache, b Batch) (*In, error) {
	n := b.Len()
	if n == 0 || len(b.Pos) != n {
		return nil, fmt.Errorf("model: batch of %d tokens with %d positions", n, len(b.Pos))
	}
	var fd backend.Feeder
	if b.Fed {
		var ok bool
		if fd, ok = be.(backend.Feeder); !ok || len(b.Tokens) != 0 {
			return nil, fmt.Errorf("model: a batch fed from the device on backend %s (with %d token ids)", be.Name(), len(b.Tokens))
		}
	}
	slots, err := slotsOf(p, c, b)
	if err != nil {
		return nil, err
	}
	for _, r := range b.Logits {
		if r < 0 || int(r) >= n {
			return nil, fmt.Errorf("model: logits asked for row %d of a batch of %d", r, n)
		}
	}
	if err := s.Reserve(n); err != nil {
		return nil, err
	}
	in := &In{N: n, Pos: s.Get("inp_pos", n), OutRows: b.Rows()}
	if fd != nil {
		in.Tokens = fd.Fed(n)
	} else {
		in.Tokens = s.Get("inp_tokens", n)
		be.WriteI32(in.Tokens, b.Tokens)
	}
	be.WriteI32(in.Pos, b.Pos)
	in.Slots = in.Pos
	for _, t := range b.Pos {
		in.Attn.MaxLen = max(in.Attn.MaxLen, int(t)+1)
	}
	if b.Tables != nil {
		in.Slots = s.Get("inp_slots", n)
		be.WriteI32(in.Slots, slots)
		seq := s.WriteKept("inp_seq", n, b.Seq)
		ns := len(b.Tables)
		host := c.tableHost[:ns*c.MaxBlocks]
		for i, t := range b.Tables {
			row := host[i*c.MaxBlocks : (i+1)*c.MaxBlocks]
			n := copy(row, t)
			clear(row[n:])
		}
		a := c.auxOf(be)
		if a == nil {
			return nil, fmt.Errorf("model: the paged cache has no tables on backend %s", be.Name())
		}
		table := be.View(a.table, 0, ns)
		if !slices.Equal(a.tableKept, host) {
			be.WriteI32(table, host)
			a.tableKept = append(a.tableKept[:0], host...)
		}
		in.Attn.Table, in.Attn.Seq, in.Attn.BlockSize = table, seq, c.BlockSize
		in.Attn.OneNew = distinct(b.Seq)
	}
	if len(b.Logits) > 0 {
		in.OutIDs = s.WriteKept("inp_out_ids", len(b.Logits), b.Logits)
	}
	return in, nil
}

// distinct reports whether no value of v repeats.
func distinct(v []int32) bool {
	seen := make(map[int32]bool, len(v))
	for _, x := range v {
		if seen[x] {
			return false
		}
		seen[x] = true
	}
	return true
}

// slotsOf checks the batch's tokens, positions and tables and returns the cache row of
// each token (nil for a contiguous cache, where it is the position).
func slotsOf(p Params, c *Cache, b Batch) ([]int32, error) {
	for i, t := range b.Tokens {
		if t < 0 || int(t) >= p.NVocab {
			return nil, fmt.Errorf("model: token %d at batch row %d is outside the vocabulary of %d", t, i, p.NVocab)
		}
	}
	for i, ps := range b.Pos {
		if ps < 0 {
			return nil, fmt.Errorf("model: negative position %d at batch row %d", ps, i)
		}
	}
	if b.Tables == nil {
		if c.BlockSize != 0 {
			return nil, errors.New("model: a batch without block tables on a paged cache")
		}
		for _, ps := range b.Pos {
			if int(ps) >= c.Size {
				return nil, fmt.Errorf("%w: position %d, cache of %d", ErrContextFull, ps, c.Size)
			}
		}
		return nil, nil
	}
	if c.BlockSize == 0 {
		return nil, errors.New("model: a batch with block tables on a contiguous cache")
	}
	if len(b.Seq) != b.Len() || len(b.Tables) > c.MaxSeqs {
		return nil, fmt.Errorf("model: %d sequence indices for %d tokens, %d tables (at most %d)", len(b.Seq), b.Len(), len(b.Tables), c.MaxSeqs)
	}
	bs, nb := c.BlockSize, c.Size/c.BlockSize
	for s, t := range b.Tables {
		if len(t) > c.MaxBlocks {
			return nil, fmt.Errorf("%w: sequence %d has %d blocks, at most %d", ErrContextFull, s, len(t), c.MaxBlocks)
		}
		for _, blk := range t {
			if blk < 0 || int(blk) >= nb {
				return nil, fmt.Errorf("model: sequence %d: block %d outside a cache of %d", s, blk, nb)
			}
		}
	}
	slots := make([]int32, b.Len())
	for i, s := range b.Seq {
		if s < 0 || int(s) >= len(b.Tables) {
			return nil, fmt.Errorf("model: batch row %d: sequence %d of %d", i, s, len(b.Tables))
		}
		t, ps := b.Tables[s], int(b.Pos[i])
		if ps/bs >= len(t) {
			return nil, fmt.Errorf("model: batch row %d: position %d past sequence %d's %d blocks", i, ps, s, len(t))
		}
		slots[i] = int32(backend.Row(t, bs, ps))
	}
	return slots, nil
}

// SelfAttention projects cur [n, NEmbd] to Q, K and V (adding biases when present),
// rotates Q and K, stores K and V into the layer's cache rows (in.Slots), attends over
// the cache and projects back, writing [n, NEmbd] into out (which may be cur).
func SelfAttention(be backend.Backend, s *Scratch, p Params, w *AttnWeights, kCache, vCache, cur backend.Tensor, in *In, out backend.Tensor) {
	n := in.N
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
	be.RoPE(q, in.Pos, p.RoPE)
	be.RoPE(k, in.Pos, p.RoPE)
	be.SetRows(kCache, k, in.Slots)
	be.SetRows(vCache, v, in.Slots)
	kqv := s.Get("kqv", n)
	a := in.Attn
	a.NHead, a.NKVHead, a.HeadDim, a.VHeadDim = p.NHead, p.NKVHead, p.HeadDim, p.VHeadDim
	a.Scale = 1 / sqrtf(float32(p.HeadDim))
	be.Attention(kqv, q, kCache, vCache, in.Pos, a)
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

// Output applies the final norm and the output projection to the rows of x the batch
// asks logits for (In.OutIDs) and returns the logits [In.OutRows, NVocab], or nil when
// it asks for none. x is
// consumed: its first rows may be overwritten.
func Output(be backend.Backend, s *Scratch, p Params, x, norm, output backend.Tensor, in *In) backend.Tensor {
	switch {
	case in.OutRows == 0:
		return nil
	case in.OutIDs != nil:
		g := s.Get("cur", in.OutRows) // free after the last layer; x may be "inpL"
		be.GetRows(g, x, in.OutIDs)
		x = g
	case in.OutRows == 1 && in.N > 1:
		x = s.Last("inpL", in.N)
	}
	cur := s.Get("result_norm", in.OutRows)
	be.RMSNorm(cur, x, norm, p.RMSEps)
	logits := s.Get("result_output", in.OutRows)
	be.MatMul(logits, output, cur)
	return logits
}
