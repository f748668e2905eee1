package cuda

import "ember/inference/quant"

// One decode row's feed-forward half in one launch (kernels/cuda/ffn.cu), with
// $EMBER_CUDA_FFN set: when the down product of a row (Q4_K or Q6_K weights) finds the two
// launches before it to be mmv_multi of that row's gate and up (Q4_K, F rows of E) and
// swiglu_q8_k of their outputs into its own Q8_K input, both are popped and ffn_q4_k or
// ffn_q6_k runs the three: a cluster of blocks a 512 hidden values computes their gate
// and up rows, SwiGLU and Q8_K row, and those columns' share of every down row, and the
// last block of each share adds the clusters' partial sums. The gate, up and SwiGLU
// values are the chain's bits; down's sums are the same terms added in another order
// (partial sums by 512 columns).
//
// Off by default: build/micro/ffs.cu had it ~2 us a layer ahead of the chain (42.05
// against 44.2 us with 8 us between FFN halves), but in the engine the 8B Q4_K_M's tg128
// was 522.2 against the chain's 525.2 (0 of 4 rounds; s68-call3: 522.6 against 525.3,
// 0 of 3). NOTES.md, session 68, says what is left to find out.

// FFNEnv names an environment variable: when set, a decode row's gate/up, SwiGLU and down
// run as ffn's one launch (ffnFuse) instead of mmv_multi, swiglu_q8_k and mmv_q4_k_1 or
// mmv_q6_k_1.
const FFNEnv = "EMBER_CUDA_FFN"

const (
	ffnCS      = 8   // FFN_CS: blocks a cluster
	ffnXQ      = 512 // FFN_XQ: the hidden values a cluster takes
	ffnThreads = 256 // 32 * FFN_W
	ffnCntSize = 256 // the counters' bytes before the partial sums in ffnPart
	ffnMaxE    = 8192
)

// ffnSmem is ffn_q4_k's dynamic shared memory for rows of e (ffn_stage in ffn.cu, then
// the block's gate, up and SwiGLU values, then the cluster's Q8_K row).
func ffnSmem(e int) int {
	st := max(actStride(quant.Q8_K, e), 16*ffnThreads)
	return st + 3*4*(ffnXQ/ffnCS) + actStride(quant.Q8_K, ffnXQ)
}

// argsOf returns the arguments of queued launch i, counted back from the queue's end
// (ffnFuse asks for the last two).
func (q *batch) argsOf(i int) []uint64 {
	end := len(q.args)
	for _, n := range q.nargs[i+1:] {
		end -= int(n)
	}
	return q.args[end-int(q.nargs[i]) : end]
}

// ffnFuse queues ffn_q4_k or ffn_q6_k in place of the last two launches (mmv_multi of
// gate and up, swiglu_q8_k) and the down product of w (Q4_K or Q6_K, E rows of F) from
// xq into d that the caller was about to queue, when they are that pattern, and reports
// whether it did.
func (b *Backend) ffnFuse(d, w *tensor, xq uint64) bool {
	q := &b.queue
	n := len(q.fns)
	if !b.ffnOn || b.fuseOff() || b.prof != nil || n < 2 || q.names[n-1] != "swiglu_q8_k" || q.names[n-2] != "mmv_multi" {
		return false
	}
	if w.typ != quant.Q4_K && w.typ != quant.Q6_K || b.br.cur != nil || b.br.prev != nil || b.br.pending != pendNone {
		return false
	}
	for _, r := range q.brs { // no branch edge at the launches popped
		if r.fork >= n-2 || r.main >= n-2 || r.join >= n-2 {
			return false
		}
	}
	// mmv_multi: x, its stride, E, then per projection w, its stride, d, rows, type;
	// swiglu_q8_k: dst, g, u, F, out, its stride, f16 rows, their stride (grid: 1 row).
	m, s := q.argsOf(n-2), q.argsOf(n-1)
	e, f := int(m[2]), int(s[3])
	q4k := uint64(quant.Q4_K)
	if m[4] != m[9] || m[6] != uint64(f) || m[11] != uint64(f) || m[7] != q4k || m[12] != q4k || m[13] != 0 ||
		s[1] != m[5] || s[2] != m[10] || s[4] != xq || s[6] != 0 || q.dims[5*(n-1)+1] != 1 {
		return false
	}
	if e%256 != 0 || e > ffnMaxE || f%ffnXQ != 0 || w.cols != f || w.rows != e || d.cols != e || d.rows != 1 {
		return false
	}
	ncl := f / ffnXQ
	part := b.scratchFor(&b.ffnPart, ffnCntSize+4*ncl*e+actStride(quant.Q8_K, f))
	if part == 0 {
		return false
	}
	// swiglu_q8_k's Q8_K row is not read after the fused launch, and in the activation
	// scratch it is the input row's memory too (both roundings take b.act[Q8_K]), which
	// the blocks read while others would write it (s68-call3's TestFFNFused failure):
	// then it goes to ffnPart's end instead.
	x14 := s[4]
	if (span{x14, x14 + uint64(actStride(quant.Q8_K, f))}).overlaps(span{m[0], m[0] + uint64(actStride(quant.Q8_K, e))}) {
		x14 = part + uint64(ffnCntSize+4*ncl*e)
	}
	q.pop()
	q.pop()
	b.fuse = fusable{cfg: b.fuse.cfg} // swiglu_q8_k's record went with it
	name := "ffn_q4_k"
	if w.typ == quant.Q6_K {
		name = "ffn_q6_k"
	}
	b.launch(name, ncl*ffnCS, 1, ffnThreads, ffnSmem(e), m[0], i64(e), m[3], m[8], m[4], m[5], m[10], i64(f),
		s[0], x14, ptr(w), i64(w.stride), ptr(d), part+ffnCntSize, part)
	return true
}
