package cuda

import (
	"os"

	"ember/inference/quant"
)

// The f16 tensor-core product of batches of decode rows (kernels/cuda/mmf.cu): Q4_K and
// Q6_K weights dequantized to f16 in registers against the activation rows' Q8_K values
// rounded to f16 (act_f16p), as cuBLASLt's products see them. mmq's int8 path is exact
// to the reference's integer sums, but at 64 rows (a decode step of 64 sequences) it
// spends most of its instructions on the sub-block scales and holds one block an SM.
const (
	// mmfMinRows and mmfMaxRows bound the activation rows mmf takes: above 32 (narrower
	// batches take mmq's 16- and 32-row tiles), below cuBLASLt's prefill products.
	mmfMinRows, mmfMaxRows = 33, 255
	// mmfTM, mmfTN: a block's tile (MF_TM, MF_TN).
	mmfTM, mmfTN = 128, 64
)

// MMFEnv names an environment variable: "0" keeps every product off mmf, "1" gives it
// every product of 16 rows or more that it takes (for tests).
const MMFEnv = "EMBER_CUDA_MMF"

// mmfMode: mmf for mmfMinRows..mmfMaxRows rows (auto), never, or from 16 rows.
type mmfMode int

const (
	mmfAuto mmfMode = iota
	mmfOff
	mmfAll
)

func mmfModeFromEnv() mmfMode {
	switch os.Getenv(MMFEnv) {
	case "0":
		return mmfOff
	case "1":
		return mmfAll
	}
	return mmfAuto
}

// mmfSmem is the dynamic shared memory of mmf_* for t weights (mf_smem): two stages of
// 128 raw weight rows and 64 f16 activation rows of 528 bytes, and the scale table.
func mmfSmem(t quant.Type) int {
	w := 144
	if t == quant.Q6_K {
		w = 240
	}
	return 2*(mmfTM*w+mmfTN*528) + mmfTM*72
}

// mmfTakes reports whether mmf computes w times n activation rows.
func (b *Backend) mmfTakes(w *tensor, n int) bool {
	if b.noMMQ || b.mmfMode == mmfOff || (w.typ != quant.Q4_K && w.typ != quant.Q6_K) || w.cols%256 != 0 {
		return false
	}
	if b.mmfMode == mmfAll {
		return n >= mmqMinRows
	}
	return n >= mmfMinRows && n <= mmfMaxRows
}

// mmfAct returns the n Q8_K activation rows xq (xs bytes apart, k values) as act_f16p's
// permuted f16 rows, 2k bytes apart, converting them once per quantization (the
// projections of MatMulShared share them); 0 when the scratch could not be had.
func (b *Backend) mmfAct(xq uint64, xs, k, n int) uint64 {
	key := mmfActKey{xq: xq, xs: xs, k: k, n: n, gen: b.qgen, epoch: b.epoch}
	if b.mmfX.key == key && b.mmfX.out != 0 {
		return b.mmfX.out
	}
	out := b.scratchFor(&b.mmfX.buf, n*2*k)
	if out == 0 {
		return 0
	}
	for r0 := 0; r0 < n; r0 += maxGridY {
		rows := min(maxGridY, n-r0)
		b.launch("act_f16p", (k/16+255)/256, rows, 256, 0, out+uint64(r0*2*k), i64(2*k), xq+uint64(r0*xs), i64(xs), i64(k))
	}
	b.mmfX.key, b.mmfX.out = key, out
	return out
}

// mmfActKey identifies a conversion: the quantized rows, and the quantization (qgen) and
// flush that wrote them.
type mmfActKey struct {
	xq         uint64
	xs, k, n   int
	gen, epoch int
}

// mmfState is the converted activation rows of the last mmf product.
type mmfState struct {
	buf scratch
	key mmfActKey
	out uint64
}

// mmf runs the f16 product of w with n Q8_K activation rows when mmfTakes it, and
// reports whether it did (an allocation failure is recorded and counts as done).
func (b *Backend) mmf(d, w *tensor, xq uint64, xstride, n int) bool {
	if !b.mmfTakes(w, n) {
		return false
	}
	xf := b.mmfAct(xq, xstride, w.cols, n)
	if xf == 0 {
		return true
	}
	mt, nt := (w.rows+mmfTM-1)/mmfTM, (n+mmfTN-1)/mmfTN
	splits := mmqSplits(mt, nt, w.cols/256)
	if nt*splits > maxGridY {
		splits = 1
	}
	part, ok := b.mmqParts(splits, n, w.rows)
	if !ok {
		return true
	}
	b.launch("mmf_"+suffix[w.typ], mt, nt*splits, 256, mmfSmem(w.typ), ptr(w), i64(w.stride), xf, i64(2*w.cols),
		ptr(d), i64(d.cols), i64(w.rows), i64(w.cols), i64(n), part, i64(nt))
	b.mmqReduce(d, part, w.rows, n, splits)
	return true
}
