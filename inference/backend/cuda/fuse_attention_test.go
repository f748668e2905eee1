package cuda_test

import (
	"fmt"
	"math"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/cuda"
	"ember/inference/quant"
)

// TestFusedAttentionQ8K: split decode attention (attention_split1), short-context
// decode attention (attention_short, forced on over these contexts: several tiles) or
// the tensor-core decode kernels (attention_dec64/128, forced on) followed by a MatMul
// that rounds its output to Q8_K (the output projection) rounds it in the attention's
// last blocks: one launch fewer, the same bits in the attention output and the product.
// attention_dec64/128 also round to Q8_0 (Q8_0 weights) and Q8_1 (Q4_1); the others do
// not. Not fused: heads whose group output is not whole 256-element blocks.
func TestFusedAttentionQ8K(t *testing.T) {
	for _, kernel := range []string{"split", "short", "dec"} {
		for _, wt := range []quant.Type{quant.Q4_K, quant.Q8_0, quant.Q4_1} {
			t.Run(fmt.Sprintf("%s %v", kernel, wt), func(t *testing.T) { fusedAttentionQ8K(t, kernel, wt) })
		}
	}
}

func fusedAttentionQ8K(t *testing.T, kernel string, wt quant.Type) {
	fuses := kernel != "split" || split1Runs(t) // attention_split's two launches round apart
	for _, c := range []struct {
		rows, nhead, nkv, hd, ctx, saved int
	}{
		{1, 32, 8, 128, 600, 1},  // Llama-3.1-8B decode
		{2, 32, 8, 128, 1500, 1}, // two sequences
		{1, 12, 2, 128, 700, 1},  // Qwen2-1.5B: 768-wide groups
		{1, 8, 4, 64, 700, 0},    // 128-wide groups: not whole blocks
		{3, 32, 8, 128, 90, 1},   // short contexts: one tile
	} {
		name := fmt.Sprintf("%d rows %d/%d heads of %d, %d positions", c.rows, c.nhead, c.nkv, c.hd, c.ctx)
		saved := c.saved
		if wt != quant.Q4_K && kernel != "dec" || !fuses {
			saved = 0
		}
		checkFused(t, name, saved, func(e *fuseEnv) (func(), []backend.Tensor) {
			switch kernel {
			case "short":
				cuda.ShortAttention(e.be, true)
			case "dec":
				cuda.ShortAttention(e.be, false)
				cuda.SplitAttention(e.be, false)
				cuda.DecodeAttention(e.be, true)
			default:
				cuda.ShortAttention(e.be, false)
				cuda.SplitAttention(e.be, true)
			}
			att, attend := decodeCase(e, c.rows, c.nhead, c.nkv, c.hd, c.ctx, 37)
			w := e.weight(wt, 256, c.nhead*c.hd)
			out := e.zeros(quant.F32, c.rows, 256)
			return func() {
				attend()
				e.be.MatMul(out, w, att)
			}, []backend.Tensor{att, out}
		})
	}
}

// decodeCase fills one F16 cache of ctx positions (nkv heads of hd dims) with random
// keys and values and returns att (rows x nhead*hd, zeros) and attend, which queues the
// decode attention of rows random queries at positions ctx-1, ctx-1-step, ... into att.
func decodeCase(e *fuseEnv, rows, nhead, nkv, hd, ctx, step int) (att backend.Tensor, attend func()) {
	return decodeCaseNew(e, rows, nhead, nkv, hd, ctx, step, false)
}

// decodeCaseNew is decodeCase with Attention.OneNew set as oneNew.
func decodeCaseNew(e *fuseEnv, rows, nhead, nkv, hd, ctx, step int, oneNew bool) (att backend.Tensor, attend func()) {
	kvw := nkv * hd
	kc, vc := e.zeros(quant.F16, ctx, kvw), e.zeros(quant.F16, ctx, kvw)
	all := make([]int32, ctx)
	for i := range all {
		all[i] = int32(i)
	}
	ids := e.ids(all...)
	e.be.SetRows(kc, e.randn(ctx, kvw, 1), ids)
	e.be.SetRows(vc, e.randn(ctx, kvw, 1), ids)
	pos := make([]int32, rows)
	for i := range pos {
		pos[i] = int32(ctx - 1 - step*i)
	}
	q, p := e.randn(rows, nhead*hd, 1), e.ids(pos...)
	att = e.zeros(quant.F32, rows, nhead*hd)
	a := backend.Attention{NHead: nhead, NKVHead: nkv, HeadDim: hd, VHeadDim: hd,
		Scale: float32(1 / math.Sqrt(float64(hd))), MaxLen: ctx, OneNew: oneNew}
	return att, func() { e.be.Attention(att, q, kc, vc, p, a) }
}

// TestFusedRoPESetRows: RoPE of Q and K, then SetRows of K and of V into their caches
// (a decode step's order) is one launch (rope2_set): three fewer, the same bits in Q, K
// and both caches; partial rotation (dims < head_dim) copies the unrotated dims too.
// Without the V write it is still two fewer; a SetRows of another tensor than the
// rotated K is not fused with the rotation.
func TestFusedRoPESetRows(t *testing.T) {
	slots := []int32{7, 2, 11}
	const capRows, hd = 16, 64
	ropes := []backend.RoPE{
		{Style: backend.RoPENormal, Dims: hd, HeadDim: hd, Base: 500000},
		{Style: backend.RoPENeoX, Dims: 32, HeadDim: hd, Base: 10000},
	}
	for _, rows := range []int{1, 3} {
		for ri, r := range ropes {
			for _, vt := range []quant.Type{quant.F16, quant.F32} {
				name := fmt.Sprintf("rows %d rope %d V cache %v", rows, ri, vt)
				checkFused(t, name, 3, func(e *fuseEnv) (func(), []backend.Tensor) {
					q, k, v := e.randn(rows, 12*hd, 1), e.randn(rows, 3*hd, 1), e.randn(rows, 3*hd, 1)
					kc, vc, p, s := e.zeros(quant.F16, capRows, 3*hd), e.zeros(vt, capRows, 3*hd), e.ids(5, 900, 33), e.ids(slots[:rows]...)
					p = e.be.View(p, 0, rows)
					return func() {
						e.be.RoPE(q, p, r)
						e.be.RoPE(k, p, r)
						e.be.SetRows(kc, k, s)
						e.be.SetRows(vc, v, s)
					}, []backend.Tensor{q, k, kc, vc}
				})
			}
		}
	}
	r := ropes[0]
	checkFused(t, "no V", 2, func(e *fuseEnv) (func(), []backend.Tensor) {
		q, k, kc, p, s := e.randn(3, 4*hd, 1), e.randn(3, 2*hd, 1), e.zeros(quant.F16, capRows, 2*hd), e.ids(1, 2, 3), e.ids(slots...)
		return func() { e.be.RoPE(q, p, r); e.be.RoPE(k, p, r); e.be.SetRows(kc, k, s) }, []backend.Tensor{q, k, kc}
	})
	checkFused(t, "another source", 2, func(e *fuseEnv) (func(), []backend.Tensor) {
		q, k, v := e.randn(3, 4*hd, 1), e.randn(3, 2*hd, 1), e.randn(3, 2*hd, 1)
		kc, vc, p, s := e.zeros(quant.F16, capRows, 2*hd), e.zeros(quant.F16, capRows, 2*hd), e.ids(1, 2, 3), e.ids(slots...)
		return func() { e.be.RoPE(q, p, r); e.be.RoPE(k, p, r); e.be.SetRows(vc, v, s); e.be.SetRows(kc, k, s) },
			[]backend.Tensor{q, k, kc, vc}
	})
}
