package cuda

import (
	"ember/inference/backend"
	"ember/inference/quant"
)

// NoNormRouterEnv names an environment variable: when set, NormRouter declines, so a
// DeepSeek-V2 MoE layer's router product runs after the norm (mmv_f32_1w on its row)
// instead of beside it (the same bits; for timing).
const NoNormRouterEnv = "EMBER_CUDA_NO_NORM_ROUTER"

// NormRouter queues one decode row's router logits from the residual sum itself:
// logits = router x RMSNorm(a + b) * nw, with the bits of Add, RMSNorm (its
// add_rms_norm_q8_k_1 form) and MatMul (mmv_f32_1w) of the normed row, in one launch
// (mmv_f32_norm_1w) that reads a and b and writes only the logits, so a model can queue
// it beside the norm (Beside) instead of after it. It declines, queuing nothing, unless
// a and b are one F32 row of 2,048 or 4,096 columns, nw their norm's weights (one F32
// row of that width; a model's loader uploads it with New, so it need not be a Weight:
// the kernel reads it after its wait, as it reads a and b; session 61's first timing
// declined every row for asking that) and router an F32 weight (or a weight's view) of
// that width with logits' columns as its rows (read before the wait: pdl_defer).
func (b *Backend) NormRouter(logits, a, bb, nw, router backend.Tensor, eps float32) bool {
	d, at, bt, wt, rt := get(logits), get(a), get(bb), get(nw), get(router)
	K := at.cols
	if b.noNR || b.prof != nil || (K != 2048 && K != 4096) || at.rows != 1 || bt.rows != 1 || bt.cols != K ||
		wt.rows != 1 || wt.cols != K || rt.cols != K || d.rows != 1 || d.cols != rt.rows || !(rt.weight || rt.ofWeight) ||
		b.noF32W {
		return false
	}
	for _, t := range []*tensor{d, at, bt, wt, rt} {
		if t.typ != quant.F32 {
			return false
		}
	}
	if spanOf(d).overlaps(spanOf(at)) || spanOf(d).overlaps(spanOf(bt)) {
		return false
	}
	b.launch("mmv_f32_norm_1w", rt.rows, 1, 128, 0, ptr(d), ptr(rt), i64(rt.stride), ptr(at), ptr(bt), ptr(wt), i64(K), f32(eps))
	return true
}
