package cuda

import "ember/inference/quant"

// mmqMinRows is the batch from which Q4_K, Q6_K and Q8_0 products go to the tensor-core
// kernel (kernels/cuda/mmq.cu) instead of the matrix-vector one.
const mmqMinRows = 16

// mmq runs the tensor-core product of w with n quantized activation rows when w's type
// and shape have one, and reports whether it did.
func (b *Backend) mmq(d, w *tensor, xq uint64, xstride, n int) bool {
	if n < mmqMinRows || w.cols%256 != 0 || b.noMMQ {
		return false
	}
	switch w.typ {
	case quant.Q4_K, quant.Q6_K, quant.Q8_0:
		b.launch("mmq_"+suffix[w.typ], (w.rows+63)/64, (n+63)/64, 128, 0, ptr(w), i64(w.stride), xq, i64(xstride),
			ptr(d), i64(d.cols), i64(w.rows), i64(w.cols), i64(n))
		return true
	}
	return false
}
