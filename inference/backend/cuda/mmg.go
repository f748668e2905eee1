package cuda

import (
	"ember/inference/quant"
)

// The wgmma product over Q4_K weights (kernels/cuda/mmg.cu) for batches of up to 64
// rows: decode of many sequences, on Hopper (sm_90a; the module does not load on other
// GPUs, and then nothing takes this path).
//
// At such batches the default path runs cuBLASLt over each weight's f16 copy, bound by
// the copy's bytes (four times Q4_K's). mmg reads a packed copy of the quantized weight
// (4/3 of Q4_K's bytes: the sub-blocks' scales as f32 pairs), dequantizes each weight in
// registers to the value the f16 copy holds (quant's float operations, rounded to f16
// once) and runs wgmma against the activation rows cuBLASLt would take (act_f16), so its
// results are the copies' up to the f32 summation order. Each stage of its operands is
// two bulk copies; build/micro/wg.cu measured the design on the H200 at 64 rows (with
// f16 scales, hfma2 dequantization and atomic split sums): 14336x4096 21.9 us and
// 4096x14336 19.3 against cuBLAS's f16 GEMM's 34.5 and 38.1 in the same run.
//
// It is off by default: in the engine it lost (session 27, 8B Q4_K_M at 64 streams,
// same call: 7,954 and 7,775 tok/s on the FFN weights against 8,230 without; on every
// Q4_K weight 7,139 and 7,454 against 7,933 and 8,215). ncu over a 64-stream step (each
// kernel alone): mmg_q4_k 30.4 us for the gate or up product (14336x4096) and 27.9 for
// down, plus mmq_reduce 6.7 and 5.4 us for their K splits and mmg_xl 3-4 us, against
// cuBLASLt's pair of gate and up at ~59 us for both. NOTES.md has what to try next.
//
// $EMBER_CUDA_MMG=N takes products of N to 64 rows; off, 0, empty or auto leave it off.
const MMGEnv = "EMBER_CUDA_MMG"

const (
	mgTM, mgTN, mgThreads = 128, 64, 256
	mgRB                  = 192 // packed bytes of a row a step (MG_RB)
	mgWS, mgXS            = mgTM * mgRB, mgTN * 256 * 2
	mgStages              = 2
	mgModule              = "mmg" // loads only on sm_90
	// mgDefaultMinRows is the fewest activation rows mmg takes when on with no row count
	// given (SetMMG in tests): the f16 copies' batches (f16DefaultMinRows).
	mgDefaultMinRows = f16DefaultMinRows
	// mgMinElems is the smallest weight mmg takes: Llama-3.1-8B's FFN (14336x4096), where
	// build/micro/wg.cu found it 1.6-2 times cuBLAS's f16 GEMM at 64 rows; at 4096x4096 it
	// was no faster (9.5 us against 8.6), and its layout and split-K launches cost more.
	mgMinElems = 1 << 25
)

// mgConf is a backend's policy for mmg.
type mgConf struct {
	loaded   bool // the module loaded (an sm_90 device)
	off      bool
	minRows  int
	minElems int     // the smallest weight taken (mgMinElems)
	products int     // products run on mmg (for tests)
	count    int     // packed copies held
	bytes    int     // device memory they hold
	xl       scratch // the activation rows in the stages' layout (mmg_xl)
	// laid is the f16 rows (laidN of laidK) xl holds while a MatMulShared runs its
	// projections (they share one rounding), so a second product over them (the up
	// projection beside the gate) lays nothing out again; 0 otherwise.
	laid         uint64
	laidK, laidN int
	shared       bool // a MatMulShared is running
}

// mgFromEnv reads $EMBER_CUDA_MMG.
func mgFromEnv() (mgConf, error) {
	n, _, err := rowsEnv(MMGEnv)
	c := mgConf{off: true, minRows: mgDefaultMinRows, minElems: mgMinElems}
	if n > 0 {
		c.off, c.minRows = false, n
	}
	return c, err
}

// mgTakes reports whether mmg runs the product of w with n activation rows: whole Q4_K
// weights of whole 256-element steps, minRows to 64 rows, with a packed copy (one made
// now if there is none and the device has room).
func (b *Backend) mgTakes(w *tensor, n int) bool {
	if !b.mg.loaded || b.mg.off || n < b.mg.minRows || n > mgTN || w.typ != quant.Q4_K || w.cols%256 != 0 || !w.weight ||
		w.rows*w.cols < b.mg.minElems {
		return false
	}
	return b.mgPack(w) != 0
}

// mgPackBytes is the size of w's packed copy: per tile of mgTM rows (the last padded
// with zero rows) and 256-element step, the rows' mgRB bytes.
func mgPackBytes(w *tensor) int { return (w.rows + mgTM - 1) / mgTM * (w.cols / 256) * mgWS }

// mgPack returns w's packed copy, queueing mmg_pack_q4_k the first time when the device
// keeps half its memory (and f16KeepFree) free after it; 0 when there is none.
func (b *Backend) mgPack(w *tensor) uint64 {
	return b.packCopy(w, &w.mgp, mgPackBytes(w), "mmg_pack_q4_k", &b.mg.count, &b.mg.bytes)
}

// mgSplits is how many ways the steps of a product of mt row tiles are divided: as many
// as fill the SMs with two blocks each, no split empty.
func mgSplits(mt, steps, sms int) int {
	if sms <= 0 {
		sms = splitDefaultSMs
	}
	s := max(1, min(steps, 2*sms/mt))
	per := (steps + s - 1) / s
	return (steps + per - 1) / per
}

// mmg queues the product d = w x^T of the n f16 activation rows xh (actStride(F16,
// w.cols) bytes apart, from ltAct): mmg_xl lays the rows out for the stages, then
// mmg_q4_k, then mmq_reduce of the K splits' partial sums.
func (b *Backend) mmg(d, w *tensor, xh uint64, n int) {
	if xh == 0 || b.err != nil {
		return
	}
	k := w.cols
	xl := b.scratchFor(&b.mg.xl, k/256*mgXS)
	mt := (w.rows + mgTM - 1) / mgTM
	splits := mgSplits(mt, k/256, b.dev.SMs)
	part, ok := b.mmqParts(splits, n, w.rows)
	if xl == 0 || !ok {
		return
	}
	if b.mg.laid != xh || b.mg.laidK != k || b.mg.laidN != n {
		b.launch("mmg_xl", blocks(mgTN*k/8), 1, 256, 0, xh, i64(actStride(quant.F16, k)), i64(n), i64(k), xl)
		if b.mg.shared {
			b.mg.laid, b.mg.laidK, b.mg.laidN = xh, k, n
		}
	}
	early := i64(1)
	if w.mgp.fresh {
		early, w.mgp.fresh = 0, false
	}
	b.launch("mmg_q4_k", mt, splits, mgThreads, mgStages*(mgWS+mgXS), w.mgp.ptr, xl, ptr(d), i64(d.cols), i64(w.rows), i64(k),
		i64(n), part, early)
	b.mmqReduce(d, part, w.rows, n, splits)
	b.mg.products++
}
