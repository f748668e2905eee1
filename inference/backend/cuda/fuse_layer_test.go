package cuda_test

import (
	"fmt"
	"testing"

	"ember/inference/backend"
	"ember/inference/quant"
)

// TestFusedDecoderLayers issues the ops of two decoder layers and the output norm as
// inference/model's Decoder does (one decode row, Q4_K weights) and wants the unfused
// bits with these launches fewer: the first layer's RMSNorm+Q8_K 1; per layer RoPE of Q
// and K with the K and V cache writes 3 (one rope2_set for four launches), Add+RMSNorm+
// Q8_K before the FFN 2, SwiGLU+Q8_K 1; Add+RMSNorm+Q8_K before each later layer and
// before the output 2.
func TestFusedDecoderLayers(t *testing.T) {
	const (
		nh, nkv, hd = 4, 2, 64
		embd, ffn   = nh * hd, 512
		nctx, vocab = 8, 64
		layers      = 2
	)
	for _, p := range []int32{0, 5} {
		saved := 1 + layers*(3+2+1) + (layers-1)*2 + 2
		checkFused(t, fmt.Sprintf("position %d", p), saved, func(e *fuseEnv) (func(), []backend.Tensor) {
			type layer struct{ wq, wk, wv, wo, wg, wu, wd, n1, n2, kc, vc backend.Tensor }
			ls := make([]layer, layers)
			for i := range ls {
				ls[i] = layer{wq: e.q4k(embd, embd), wk: e.q4k(nkv*hd, embd), wv: e.q4k(nkv*hd, embd),
					wo: e.q4k(embd, embd), wg: e.q4k(ffn, embd), wu: e.q4k(ffn, embd), wd: e.q4k(embd, ffn),
					n1: e.randn(1, embd, 1), n2: e.randn(1, embd, 1),
					kc: e.zeros(quant.F16, nctx, nkv*hd), vc: e.zeros(quant.F16, nctx, nkv*hd)}
			}
			outNorm, output := e.randn(1, embd, 1), e.q4k(vocab, embd)
			inpL, pos := e.randn(1, embd, 1), e.ids(p)
			f32 := func(cols int) backend.Tensor { return e.zeros(quant.F32, 1, cols) }
			cur, ffnInp, q, k, v, kqv := f32(embd), f32(embd), f32(embd), f32(nkv*hd), f32(nkv*hd), f32(embd)
			gate, up, res, logits := f32(ffn), f32(ffn), f32(embd), f32(vocab)
			rope := backend.RoPE{Style: backend.RoPENormal, Dims: hd, HeadDim: hd, Base: 500000}
			attn := backend.Attention{NHead: nh, NKVHead: nkv, HeadDim: hd, VHeadDim: hd, Scale: 0.125}
			be := e.be
			ops := func() {
				for _, w := range ls {
					be.RMSNorm(cur, inpL, w.n1, 1e-5)
					backend.MatMulShared(be, cur, []backend.Proj{{Dst: q, W: w.wq}, {Dst: k, W: w.wk}, {Dst: v, W: w.wv}})
					be.RoPE(q, pos, rope)
					be.RoPE(k, pos, rope)
					be.SetRows(w.kc, k, pos)
					be.SetRows(w.vc, v, pos)
					be.Attention(kqv, q, w.kc, w.vc, pos, attn)
					be.MatMul(cur, w.wo, kqv)
					be.Add(ffnInp, cur, inpL)
					be.RMSNorm(cur, ffnInp, w.n2, 1e-5)
					backend.MatMulShared(be, cur, []backend.Proj{{Dst: gate, W: w.wg}, {Dst: up, W: w.wu}})
					be.SwiGLU(gate, gate, up)
					be.MatMul(cur, w.wd, gate)
					be.Add(inpL, cur, ffnInp)
				}
				be.RMSNorm(res, inpL, outNorm, 1e-5)
				be.MatMul(logits, output, res)
			}
			outs := []backend.Tensor{logits, res, inpL, ffnInp, q, k, v, kqv, gate}
			for _, w := range ls {
				outs = append(outs, w.kc, w.vc)
			}
			return ops, outs
		})
	}
}
