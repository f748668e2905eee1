package cuda

import (
	"os"

	"ember/inference/backend"
	"ember/inference/quant"
)

// The wgmma product over Q4_K weights (kernels/cuda/mmg.cu) for batches of up to 64
// rows: decode of many sequences, on Hopper (sm_90a; the module does not load on other
// GPUs, and then nothing takes this path).
//
// At such batches the default path runs cuBLASLt over each weight's f16 copy, bound by
// the copy's bytes (four times Q4_K's). mmg reads a packed copy of the quantized weight
// (10/9 of Q4_K's bytes: each sub-block's scale and min as an f16 pair), dequantizes each
// weight in registers (q * f16(d*sc) - f16(dmin*m), one f16 fma, as mmf) and runs wgmma
// against the activation rows cuBLASLt would take (act_f16), so its results are the
// copies' but for the weights' extra rounding (TestMMG's bound is the reference's, as
// TestMMF's) and the f32 summation order. Until session 32 each weight was quant's value
// rounded once (the copies' bits), seven instructions a pair of weights that the SMs'
// issue could not keep up with; the f16 form's three took the gate/up pair from 44.6 to
// 34.8 us (build/micro/mmgb.cu) and 8B Q4_K_M at 64 streams from 9,456-9,595 to
// 9,817-9,954 decode tok/s (same call, rounds alternating). Each stage of its operands is
// two bulk copies; build/micro/wg.cu measured the design on the H200 at 64 rows (with
// f16 scales, hfma2 dequantization and atomic split sums): 14336x4096 21.9 us and
// 4096x14336 19.3 against cuBLAS's f16 GEMM's 34.5 and 38.1 in the same run.
//
// The engine runs it on gate and up pairs (MatMulShared): one launch of both, no K
// split; since session 32 also single weights whose tiles do not fill the GPU, in K
// splits whose last blocks add the partial sums (mgConf.single). H200, session 28,
// build/micro/mmgb.cu at 64 rows: the gate and up pair of Llama-3.1-8B 44.3 us against
// cuBLAS's f16 GEMM twice 67.5; down alone with eight splits 38.9 against 35.1. 8B
// Q4_K_M at 64 streams, same call, three rounds: 8,652 / 8,673 / 8,600 decode tok/s
// with it against 8,251 / 8,213 / 8,192 without.
//
// $EMBER_CUDA_MMG=N takes products of N to 64 rows; off or 0 turn it off; empty or
// auto take mgDefaultMinRows to 64.
const MMGEnv = "EMBER_CUDA_MMG"

// MMGSingleEnv names an environment variable: 0 leaves single products that need K
// splits (Llama-3.1-8B's Q4_K down projections: mgConf.single) to the default path, for
// timing them against mmg; unset or anything else, mmg takes them.
const MMGSingleEnv = "EMBER_CUDA_MMG_SINGLE"

const (
	mgTM, mgTN, mgThreads = 128, 64, 256
	mgRB                  = 160 // packed bytes of a row a step (MG_RB)
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
	// single: products of one weight that need K splits are taken too (weights of
	// minElems or more: Llama-3.1-8B's down, 4096x14336 in eight splits). Off until
	// session 32 (session 28: 38.9 us against cuBLAS's 35.1; in clusters of eight,
	// session 29, the engine lost); with the f16 dequantization 30.1 against 35.7
	// (build/micro/mmgb.cu) and 8B Q4_K_M at 64 streams 10,114 / 10,105 / 10,133 against
	// 10,017 / 10,011 / 10,058 (same call, rounds alternating), so on by default.
	single bool
}

// mgFromEnv reads $EMBER_CUDA_MMG and $EMBER_CUDA_MMG_SINGLE.
func mgFromEnv() (mgConf, error) {
	n, off, err := rowsEnv(MMGEnv)
	c := mgConf{off: off || err != nil, minRows: mgDefaultMinRows, minElems: mgMinElems, single: os.Getenv(MMGSingleEnv) != "0"}
	if n > 0 {
		c.minRows = n
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

// mgTakesOne reports whether mmg runs the product of w alone (not as a pair) with n
// rows: where mgTakes and it needs no K split, or single products are on (mgConf.single).
func (b *Backend) mgTakesOne(w *tensor, n int) bool {
	if !b.mg.single && (w.cols < 256 || mgSplits(mgTiles(w), w.cols/256, b.dev.SMs) > 1) {
		return false // checked first: mgTakes makes the packed copy
	}
	return b.mgTakes(w, n)
}

// mgPackBytes is the size of w's packed copy: per tile of mgTM rows (the last padded
// with zero rows) and 256-element step, the rows' mgRB bytes.
func mgPackBytes(w *tensor) int { return (w.rows + mgTM - 1) / mgTM * (w.cols / 256) * mgWS }

// mgPack returns w's packed copy, queueing mmg_pack_q4_k the first time when the device
// keeps half its memory (and f16KeepFree) free after it; 0 when there is none.
func (b *Backend) mgPack(w *tensor) uint64 {
	return b.packCopy(w, &w.mgp, mgPackBytes(w), "mmg_pack_q4_k", w.cols/256, &b.mg.count, &b.mg.bytes)
}

// mgSplits is how many ways the steps of a product of mt row tiles are divided: as many
// as fill the SMs with two blocks each, no split empty.
func mgSplits(mt, steps, sms int) int {
	sms = smsOr(sms)
	s := max(1, min(steps, 2*sms/mt))
	per := (steps + s - 1) / s
	return (steps + per - 1) / per
}

// mmg queues the product d = w x^T of the n f16 activation rows xh (actStride(F16,
// w.cols) bytes apart, from ltAct): mmgRun of one weight.
func (b *Backend) mmg(d, w *tensor, xh uint64, n int) {
	b.mmgRun(func() uint64 { return xh }, 0, 0, n, [2]*tensor{d}, [2]*tensor{w})
}

// mmgPair runs the products of two weights of one activation rounding (a gate and up
// pair) as one mmg_q4_k launch when it takes both and their tiles fill the GPU without
// K splits, and reports whether it did. xq holds the activation rows rounded to Q8_K (xs
// bytes apart; 0 if another rounding), xh makes their f16 rows (ltAct) when asked.
func (b *Backend) mmgPair(xt *tensor, p0, p1 backend.Proj, xq uint64, xs int, xh func() uint64) bool {
	d0, w0, d1, w1 := get(p0.Dst), get(p0.W), get(p1.Dst), get(p1.W)
	// The shapes first: mgTakes makes the packed copies, of no use to a pair that splits.
	if w0.cols != w1.cols || w0.cols < 256 || mgSplits(mgTiles(w0)+mgTiles(w1), w0.cols/256, b.dev.SMs) != 1 ||
		!b.mgTakes(w0, xt.rows) || !b.mgTakes(w1, xt.rows) {
		return false
	}
	b.mmgRun(xh, xq, xs, xt.rows, [2]*tensor{d0, d1}, [2]*tensor{w0, w1})
	return true
}

// mgTiles is w's row tiles of mgTM rows.
func mgTiles(w *tensor) int { return (w.rows + mgTM - 1) / mgTM }

// mmgRun lays the activation rows out for the stages and queues one mmg_q4_k over ws[0]
// (and ws[1] when not nil, in the same launch, with no K split) into ds; one weight's K
// splits are added by the last block of each tile. The layout: where xq (the Q8_K rows,
// xs bytes apart) was just written by add_rms_norm_q8_k, that launch writes it too
// (fuseHalf); else mmg_xl from the f16 rows xh makes, unless the rows xl holds are these.
func (b *Backend) mmgRun(xh func() uint64, xq uint64, xs, n int, ds, ws [2]*tensor) {
	if b.err != nil {
		return
	}
	w0, k := ws[0], ws[0].cols
	xl := b.scratchFor(&b.mg.xl, k/256*mgXS)
	if xl == 0 {
		return // b.err is set
	}
	laid := xq != 0 && b.fuseHalf(xq, xs, k, n, xl, -1)
	var h uint64
	if laid {
		b.mg.laid = 0 // xl holds these rows, but no f16 rows were made to know them by
	} else if h = xh(); h == 0 || b.err != nil {
		return
	}
	mt0 := mgTiles(w0)
	mt, splits := mt0, 1
	if ws[1] != nil {
		mt += mgTiles(ws[1])
	} else {
		splits = mgSplits(mt0, k/256, b.dev.SMs)
	}
	var part, count uint64
	if splits > 1 {
		var ok bool
		if part, ok = b.mmqParts(splits, n, w0.rows); !ok {
			return
		}
		count = b.counters(4 * mt0)
	}
	if splits > 1 && count == 0 {
		return // b.err is set
	}
	if !laid && (b.mg.laid != h || b.mg.laidK != k || b.mg.laidN != n) {
		b.launch("mmg_xl", blocks(mgTN*k/8), 1, 256, 0, h, i64(actStride(quant.F16, k)), i64(n), i64(k), xl)
		if b.mg.shared {
			b.mg.laid, b.mg.laidK, b.mg.laidN = h, k, n
		}
	}
	early := i64(1)
	var p1, d1 uint64
	var m1, s1 int
	for j, w := range ws {
		if w == nil {
			continue
		}
		if w.mgp.fresh {
			early, w.mgp.fresh = 0, false
		}
		if j == 1 {
			p1, d1, m1, s1 = w.mgp.ptr, ptr(ds[1]), w.rows, ds[1].cols
		}
		b.mg.products++
	}
	b.launch("mmg_q4_k", mt, splits, mgThreads, mgStages*(mgWS+mgXS), w0.mgp.ptr, p1, i64(mt0), xl, ptr(ds[0]), d1, i64(ds[0].cols),
		i64(s1), i64(w0.rows), i64(m1), i64(k), i64(n), part, count, early)
}
