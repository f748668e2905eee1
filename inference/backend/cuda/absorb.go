package cuda

import "ember/inference/quant"

// DeepSeek's absorbed query of one decode row in one launch (kernels/cuda/absorb.cu),
// by default ($EMBER_CUDA_ABSORB=off turns it off): the mat-vec of every head's q_nope
// rows (Q4_K), their Q8_0 rounding (quant_q8) and attn_k_b's per-head products (mmv_idw_q8_0) become
// absorb_q4_k_q8_0, a cluster of blocks a head, so that attn_k_b's head h waits for
// q_nope's head h only, not for the whole grid twice. The same bits as the chain: the
// q_nope sums are mv1_q4_k's, the rounding quant_q8's, attn_k_b's sums mv1_q8_0's in its
// order. V2-Lite Q4_K_M tg128 on the H200: 762.4 against 739.4 without it (session 72,
// medians of 5 rotated rounds; NOTES.md).

// AbsorbEnv names an environment variable: unless it is "off", a decode row's q_nope
// mat-vec, its rounding and attn_k_b's run are absorb_q4_k_q8_0's one launch (absorbFuse).
const AbsorbEnv = "EMBER_CUDA_ABSORB"

// absorbCS, absorbQN and absorbQL are absorb.cu's ABS_CS (blocks a head), ABS_QN
// (q_nope values a head) and ABS_QL (attn_k_b's rows a head).
const absorbCS, absorbQN, absorbQL = 8, 128, 512

// absorbFuse queues absorb_q4_k_q8_0 in place of the last queued launch, the Q4_K
// mat-vec of one row that wrote xt (H rows of absorbQN: the heads' q_nope, reshaped), for
// the uniform run ps of the heads' attn_k_b products (Q8_0 weights, absorbQL x absorbQN,
// es bytes apart, one row each, head h from row h) that the caller was about to round xt
// for and queue, and reports whether it did. The fused launch takes the mat-vec's index
// in the queue (a branch's main run may start with it), reads its weights and Q8_K row,
// and writes its output as it did.
func (b *Backend) absorbFuse(xt *tensor, ps []product, es int64) bool {
	q := &b.queue
	n := len(q.fns)
	if !b.absorbOn || b.fuseOff() || b.prof != nil || n == 0 || q.names[n-1] != "mmv_q4_k_1e" && q.names[n-1] != "mmv_q4_k_1" {
		return false
	}
	H, w0 := len(ps), ps[0].w
	if w0.typ != quant.Q8_0 || w0.rows != absorbQL || w0.cols != absorbQN || xt.cols != absorbQN || xt.rows != H ||
		xt.stride != 4*absorbQN || ps[0].d.rows != 1 || ps[0].row0 != 0 {
		return false
	}
	for _, p := range ps {
		if !p.w.weight && !p.w.ofWeight {
			return false
		}
	}
	// the mat-vec's arguments (MMV_ARGS): W, its stride, X, its stride, D, its stride, M, K, nx
	m := q.argsOf(n - 1)
	if m[4] != xt.ptr || m[6] != uint64(H*absorbQN) || m[7]%256 != 0 || m[7] > 2048 || m[8] != 1 {
		return false
	}
	q.pop()
	b.launch("absorb_q4_k_q8_0", H*absorbCS, 1, 256, 0, m[0], m[1], m[2], m[7], xt.ptr, ptr(w0), i64(w0.stride), uint64(es),
		ptr(ps[0].d), i64(runRowStride(ps)))
	return true
}
