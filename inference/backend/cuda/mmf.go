package cuda

import "ember/inference/quant"

// The f16 tensor-core product over quantized weights (kernels/cuda/mmf.cu) for batches
// of a few dozen rows: decode of many sequences.
//
// At such batches mmq's int8 tiles are bound by their instructions (each sub-block's
// scales applied to every output its mma makes) and cuBLASLt over an f16 copy by the
// copy's bytes (four times Q4_K's). mmf dequantizes each weight once a block in
// registers (scale and min applied to the weight, in half2) and runs f16 mma.sync
// against the activation rows cuBLASLt would take (act_f16 of the partner-rounded
// values), so it reads the quantized bytes once and does a fraction of mmq's work. Its
// results are those of the cuBLASLt path up to the f16 rounding of the scaled weights
// and the f32 summation order.
//
// It is off by default: each of its weights is rounded twice (the sub-block's scale and
// min to f16, then q * scale + min in half2), ~1.9 times the f16 copies' error (relative
// RMS 3.8e-4 against 2.1e-4 over llama-tiny-q4_k's Q4_K tensors), and with it on from
// 16 rows a prompt's batch left the CUDA goldens' bounds (llama-tiny-q4_k NMSE 0.04 at
// a position against 5e-3; the copies forced from one row gave 5.8e-3). Rounding each
// weight once from f32, as the copies do, is the next step. $EMBER_CUDA_MMF=N turns it
// on for products of N rows up to those the f16 copies take (f16copy.go: 48), or,
// where there are no copies, up to cuBLASLt's or mmq's prompt-sized products (256);
// off, 0 or auto leave it off. On the H200 (NOTES.md, session 13) Llama-3.1-8B's 14336x4096 Q4_K at 32 rows
// took 26 us against mmq's 33 and cuBLASLt's 37, and with EMBER_CUDA_MMF=16 decoding 16
// and 32 sequences went from 2,572 and 3,587 tok/s to 2,832 and 3,997 (2,649 and 4,049
// in a later call); at 64 rows the f16 copies stay ahead for the large weights (40 us
// against 44).
const MMFEnv = "EMBER_CUDA_MMF"

const (
	mfTM, mfTN, mfThreads = 256, 64, 512
	mfXLD                 = 576 // bytes of an activation row of a stage (MF_XLD)
	mfStages              = 2   // steps in flight (mf_stages)
	// mfDefaultMinRows is the fewest activation rows whose products take mmf when it is
	// on with no row count given (SetMMF in tests).
	mfDefaultMinRows = mmqMinRows
)

// mfConf is a backend's policy for mmf.
type mfConf struct {
	on       bool
	minRows  int
	products int // products run on mmf (for tests)
	count    int // packed copies held
	bytes    int // device memory they hold
}

// mfFromEnv reads $EMBER_CUDA_MMF.
func mfFromEnv() (mfConf, error) {
	c := mfConf{minRows: mfDefaultMinRows}
	n, _, err := rowsEnv(MMFEnv)
	if n > 0 {
		c.on, c.minRows = true, n
	}
	return c, err
}

// mfWLD is mf_wld of mmf.cu: the bytes of a weight row of a step, in the packed copy
// and in a stage.
func mfWLD(t quant.Type) int {
	if t == quant.Q6_K {
		return 224
	}
	return 160
}

// mfStageBytes is mf_stage_bytes of mmf.cu.
func mfStageBytes(t quant.Type) int { return mfTM*mfWLD(t) + mfTN*mfXLD }

// mfKernel is the name prefix of mmf for n activation rows in nt tiles: the n8 tiles a
// block computes (2, 4 or 8) are a template parameter of the kernel.
func mfKernel(n, nt int) string {
	switch {
	case nt == 1 && n <= 16:
		return "mmf2_"
	case nt == 1 && n <= 32:
		return "mmf4_"
	}
	return "mmf_"
}

// mfTakes reports whether mmf (or mmg, which it dispatches to, where mgTakes) runs the
// product of w with n activation rows: Q4_K and
// Q6_K rows of whole 256-element steps of a whole weight with a packed copy (one made
// now if there is none and the device has room), from minRows rows to below the f16
// copies' (where they are on) and cuBLASLt's (at most ltDefaultMinRows: prompt-sized
// products stay on cuBLASLt or mmq).
func (b *Backend) mfTakes(w *tensor, n int) bool {
	if b.mgTakesOne(w, n) {
		return true // on mmg (mmf dispatches)
	}
	least, most := b.mfRows()
	if !b.mf.on || n < least || n >= most || b.smemLim > 0 && mfStages*mfStageBytes(w.typ) > b.smemLim {
		return false
	}
	return (w.typ == quant.Q4_K || w.typ == quant.Q6_K) && w.cols%256 == 0 && b.mfPack(w) != 0
}

// mfRows is the range [least, most) of activation rows whose products mmf takes.
func (b *Backend) mfRows() (least, most int) {
	least, most = b.mf.minRows, ltDefaultMinRows // prompt-sized products: cuBLASLt or mmq
	if least == 0 {
		least = mfDefaultMinRows
	}
	if b.lt.lib != nil && b.lt.minRows > 0 {
		most = min(most, b.lt.minRows)
	}
	if b.lt.lib != nil && !b.f16c.off && b.f16c.minRows > 0 {
		most = min(most, b.f16c.minRows) // the f16 copies' batches
	}
	return least, most
}

// mfPackBytes is the size of w's packed copy: per tile of mfTM rows (the last padded
// with zero rows) and step of 256 elements, the rows' bytes of a step.
func mfPackBytes(w *tensor) int {
	return (w.rows + mfTM - 1) / mfTM * (w.cols / 256) * mfTM * mfWLD(w.typ)
}

// mfPack returns w's packed copy, queueing mmf_pack the first time when w is a whole
// weight and the device keeps half its memory (and f16KeepFree) free after it; 0 when
// there is none. A block of mmf then copies each step's weights as one contiguous
// piece: from the rows' own layout (a 144-byte piece of each of 256 rows 2,304 bytes
// apart for Llama's Q4_K) its copies ran at under 1 TB/s.
func (b *Backend) mfPack(w *tensor) uint64 {
	return b.packCopy(w, &w.mfp, mfPackBytes(w), "mmf_pack_"+suffix[w.typ], w.cols/256, &b.mf.count, &b.mf.bytes)
}

// mfSplits is how many ways the steps of a product with mt x nt tiles are divided: as
// many as fill the SMs once (a block an SM), at least two steps each.
func mfSplits(mt, nt, steps, sms int) int {
	sms = smsOr(sms)
	tiles := mt * nt
	if tiles*2 > sms || steps < 4 {
		return 1
	}
	s := min(sms/tiles, steps/2)
	per := (steps + s - 1) / s
	return (steps + per - 1) / per // no split left empty
}

// mmf queues the product d = w x^T of the n f16 activation rows xh (actStride(F16,
// w.cols) bytes apart, from ltAct).
func (b *Backend) mmf(d, w *tensor, xh uint64, n int) {
	if b.mgTakesOne(w, n) {
		b.mmg(d, w, xh, n)
		return
	}
	if xh == 0 || b.err != nil {
		return
	}
	mt, nt := (w.rows+mfTM-1)/mfTM, (n+mfTN-1)/mfTN
	splits := mfSplits(mt, nt, w.cols/256, b.dev.SMs)
	if nt*splits > maxGridY {
		splits = 1
	}
	part, ok := b.mmqParts(splits, n, w.rows)
	if !ok {
		return
	}
	// The first product after the copy is made waits for the kernel before it before
	// reading the copy (it may be mmf_pack itself); later ones read their first steps
	// while the kernel before finishes, as for any weight (pdl_defer in common.cuh).
	early := i64(1)
	if w.mfp.fresh {
		early, w.mfp.fresh = 0, false
	}
	b.launch(mfKernel(n, nt)+suffix[w.typ], mt, nt*splits, mfThreads, mfStages*mfStageBytes(w.typ), w.mfp.ptr,
		xh, i64(actStride(quant.F16, w.cols)), ptr(d), i64(d.cols), i64(w.rows), i64(w.cols), i64(n), part, i64(nt),
		early)
	b.mmqReduce(d, part, w.rows, n, splits)
	b.mf.products++
}

// mfMatMul runs d = w x^T on mmf when it takes the product; false (having done nothing)
// when it does not.
func (b *Backend) mfMatMul(d, w, x *tensor) bool {
	if !b.mfTakes(w, x.rows) {
		return false
	}
	vt := partner(w.typ)
	xq, xs := b.quantize(x, vt)
	b.mmf(d, w, b.ltAct(xq, xs, vt, x.cols, x.rows), x.rows)
	return true
}
