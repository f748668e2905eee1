package cuda

import (
	"fmt"
	"os"
	"strconv"
)

// F16 copies of quantized weights for batched products.
//
// A product of a few dozen activation rows (decode of many sequences) on our int8
// tensor-core kernel (mmq) is bound by its instructions, not by the weights' bytes: on
// the H200, Llama-3.1-8B's 14336x4096 Q4_K gate at 64 rows took ~64 us for 33 MB of
// weights (~0.5 TB/s). cuBLASLt's f16 GEMM at those rows is bound by the bytes, but the
// f16 rows must then exist: dequantizing them for every product (what products of
// ltMinRows+ rows do, cublaslt_matmul.go) costs more than mmq at a few dozen rows.
//
// So where the GPU has memory to spare, a weight's first product on cuBLASLt
// dequantizes the whole matrix once into an f16 copy kept beside it (dequant.cu: each
// value as quant.Dequantize computes it, rounded to f16). Prefill products (ltMinRows
// rows and more) then skip their dequantization, and the products of f16MinRows rows
// and more of the large weights (f16DefaultMinElems: Llama's FFN and output head) and of
// the short-row ones (f16ShortRows) go to cuBLASLt over the copy; the others stay on mmq
// below ltMinRows rows, where it is as fast or faster (and needs no flush of the launch
// queue). The results are those of
// that path: the reference's up to f16's rounding of the weights and the rounded
// activations, and cuBLAS's f32 summation order.
//
// A copy is made only while the device keeps at least half its memory (and at least
// f16KeepFree) free after it, so a desktop GPU that holds a model with little to spare
// makes few or none, and runs as before. $EMBER_CUDA_F16_COPIES=off turns copies off; a
// number sets the fewest activation rows that take them.
const F16CopiesEnv = "EMBER_CUDA_F16_COPIES"

// F16MinElemsEnv names an environment variable that sets the smallest weight (rows x
// columns) whose products of a few dozen rows take its copy.
const F16MinElemsEnv = "EMBER_CUDA_F16_MIN_ELEMS"

const (
	// f16DefaultMinRows is the fewest activation rows whose products take the copies.
	f16DefaultMinRows = 48
	// f16KeepFree is the device memory copies always leave free.
	f16KeepFree = 8 << 30
	// f16DefaultMinElems is the smallest weight (rows x columns) whose products of fewer
	// than ltMinRows rows take its copy: Llama-3.1-8B's FFN, output head, Q, O, and K and
	// V (1024x4096) since their products pair (ltpair.go): 8B at 64 streams 7,744, 7,977,
	// 7,744, 8,033 tok/s against 7,649, 7,759, 7,463, 7,772 with 1 << 24 (session 16, same
	// call, runs interleaved; V2-Lite, whose 2,048-column weights take their copies
	// anyway, unchanged: 6,270, 6,309, 6,056 against 6,281, 6,201, 6,196). On the H200 at
	// 64 rows (TestPrefillProducts, session 12): 14336x4096 Q4_K mmq 54 us, cuBLASLt 42;
	// 4096x14336 53 / 51; 4096x4096 20 / 23; 1024x4096 12 / 22 (Q6_K: 74 / 43, 68 / 51,
	// 25 / 23, 15 / 27). In a decode step (ncu, session 15) Q and O on mmq took 15.4 us
	// each plus 5.4 for the K-split reduce, on the copy 13.0; 8B at 64 streams did 7,323,
	// 7,446, 7,605 tok/s with 4096x4096 weights on their copies against 7,229, 7,401,
	// 7,179 without (same call; 1 << 25 before), and with every weight on its copy (K and
	// V too) no better than Q and O alone, before the pairs.
	f16DefaultMinElems = 1 << 22
	// f16ShortRows is the longest weight row whose few-row products take the copy
	// whatever the weight's size: mmq has few K steps to divide among blocks there.
	// DeepSeek-V2-Lite (2,048-column projections) decoding 64 sequences did 6,115 and
	// 6,267 tok/s with every such product on its copy against 5,769 and 5,849 with only
	// the large weights' (same call), while Llama-3.1-8B (4,096 columns) was faster with
	// only the large weights' (7,270 and 7,344 against 7,138).
	f16ShortRows = 2048
)

// f16Copies is a backend's policy for f16 weight copies and what it has made.
type f16Copies struct {
	off      bool
	minRows  int
	minElems int // $EMBER_CUDA_F16_MIN_ELEMS, else f16DefaultMinElems
	bytes    int // device memory the copies hold
	count    int
}

// f16CopiesFromEnv reads $EMBER_CUDA_F16_COPIES.
func f16CopiesFromEnv() (f16Copies, error) {
	c := f16Copies{minRows: f16DefaultMinRows, minElems: f16DefaultMinElems}
	if v := os.Getenv(F16MinElemsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return c, fmt.Errorf("cuda: $%s=%q: want an element count", F16MinElemsEnv, v)
		}
		c.minElems = n
	}
	n, off, err := rowsEnv(F16CopiesEnv)
	c.off = off
	if n > 0 {
		c.minRows = n
	}
	return c, err
}

// rowsEnv reads an environment variable that turns a product path off or sets the
// fewest activation rows it takes: n for a row count, off for off or 0, neither for
// unset or auto.
func rowsEnv(name string) (n int, off bool, err error) {
	switch v := os.Getenv(name); v {
	case "", "auto":
		return 0, false, nil
	case "off", "0":
		return 0, true, nil
	default:
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, false, fmt.Errorf("cuda: $%s=%q: want off, auto or a row count", name, v)
		}
		return n, false, nil
	}
}

// f16Takes reports whether a product of w with n activation rows (fewer than
// cuBLASLt's own minimum) runs on cuBLASLt over w's f16 copy (one made now if there is
// none yet and the device has room).
func (b *Backend) f16Takes(w *tensor, n int) bool {
	return b.f16c.wants(w.rows, w.cols, n) && b.f16Copy(w) != 0
}

// wants reports whether a product of n activation rows (fewer than cuBLASLt's own
// minimum) with a rows x cols weight should run over the weight's f16 copy: n of at
// least minRows, and a weight of at least minElems elements or of rows of at most
// f16ShortRows columns.
func (c f16Copies) wants(rows, cols, n int) bool {
	return !c.off && n >= c.minRows && (rows*cols >= c.minElems || cols <= f16ShortRows)
}

// f16Copy returns w's f16 copy, queueing its dequantization the first time when w is a
// weight and the device has room; 0 when there is none. w's type and row length are ones
// the dequantization kernels take (ltTakes, the only caller, checked them). A weight
// declined once (no room) is not asked again.
func (b *Backend) f16Copy(w *tensor) uint64 {
	if w.f16 != 0 || b.f16c.off || !w.weight || w.noF16 || b.lt.lib == nil {
		return w.f16
	}
	size := w.f16Bytes()
	p := b.spareAlloc(size)
	if p == 0 {
		w.noF16 = true
		return 0
	}
	b.launch("dequant_f16_"+suffix[w.typ], blocks(w.rows*w.cols/8), 1, 256, 0, w.ptr, i64(w.stride), p, i64(w.cols), i64(w.rows))
	w.f16 = p
	b.f16c.bytes += size
	b.f16c.count++
	return p
}

// spare reports whether n more bytes leave the device at least half its memory, and
// f16KeepFree, free: the rule for memory that only speeds things up (weight copies,
// widened weights).
func (b *Backend) spare(n int) bool {
	free, total, err := b.h.memInfo()
	return err == nil && free-n >= max(total/2, f16KeepFree)
}

// spareAlloc allocates n bytes for a copy of a weight (f16 or mmf's packed one) when the
// device can spare them; 0 when it cannot (or the allocation fails: the product then
// runs without the copy).
func (b *Backend) spareAlloc(n int) uint64 {
	if !b.spare(n) {
		return 0
	}
	p, err := b.alloc(n)
	if err != nil {
		return 0
	}
	return p
}

// forgetCopies drops the f16 and packed copies of t from the counts (Free returned
// their memory to the pool).
func (b *Backend) forgetCopies(t *tensor) {
	if t.f16 != 0 {
		b.f16c.count--
		b.f16c.bytes -= t.f16Bytes()
		t.f16 = 0
	}
	t.mfp.drop(mfPackBytes(t), &b.mf.count, &b.mf.bytes)
	t.mgp.drop(mgPackBytes(t), &b.mg.count, &b.mg.bytes)
	t.q5p.drop(q5pBytes(t), &b.q5.count, &b.q5.bytes)
}

// f16Bytes is the size of t's f16 copy.
func (t *tensor) f16Bytes() int { return 2 * t.rows * t.cols }

// F16Copies reports the f16 weight copies made so far and the device memory they hold.
func (b *Backend) F16Copies() (count, bytes int) { return b.f16c.count, b.f16c.bytes }
