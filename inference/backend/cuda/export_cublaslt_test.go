package cuda

import (
	"context"
	"fmt"
	"unsafe"

	"ember/inference/backend"
	"ember/inference/quant"
)

// CublasAvailable reports whether b loaded cuBLASLt, and why not when it did not.
func CublasAvailable(b *Backend) (bool, string) { return b.lt.lib != nil, b.lt.off }

// CublasLibrary is the path of the cuBLASLt b loaded.
func CublasLibrary(b *Backend) string { return b.CublasLibrary() }

// CublasProducts is the number of products b has run on cuBLASLt.
func CublasProducts(b *Backend) int { return b.lt.products }

// SetCublas sets the rows from which products go to cuBLASLt and the weight rows per
// chunk of the f16 rows dequantized for a product (0: from the 256 MiB cap), so that
// tests take the path on small shapes and in several chunks (then the output's row
// stride is larger than a chunk). With chunks the weights' f16 copies (f16copy.go) are
// off, since a weight with a copy takes no chunks; with 0 they are on.
func SetCublas(b *Backend, minRows, chunkRows int) {
	b.lt.minRows, b.lt.chunkRows = minRows, chunkRows
	b.f16c.off = chunkRows > 0
}

// SetF16Copies turns the weights' f16 copies on or off and sets the smallest weight
// (elements) whose few-row products take them.
func SetF16Copies(b *Backend, on bool, minElems int) { b.f16c.off, b.f16c.minElems = !on, minElems }

// HasF16Copy reports whether weight w has an f16 copy.
func HasF16Copy(w backend.Tensor) bool { return get(w).f16 != 0 }

// F16CopiesFromEnv is f16CopiesFromEnv: whether copies are off and the fewest rows.
func F16CopiesFromEnv() (off bool, minRows int, err error) {
	c, err := f16CopiesFromEnv()
	return c.off, c.minRows, err
}

// DequantF16 runs dequant.cu's kernel for w's type over all of w and returns the halves
// (rows x cols, row-major).
func DequantF16(b *Backend, w backend.Tensor) ([]uint16, error) {
	t := get(w)
	name, ok := suffix[t.typ]
	if !ok || t.typ == quant.F16 || t.typ == quant.F32 {
		return nil, fmt.Errorf("no dequant kernel for %v", t.typ)
	}
	n := t.rows * t.cols
	out, err := b.h.alloc(2 * n)
	if err != nil {
		return nil, err
	}
	defer b.h.free(out) //nolint:errcheck // a test helper
	b.launch("dequant_f16_"+name, blocks(n/8), 1, 256, 0, t.ptr, i64(t.stride), out, i64(t.cols), i64(t.rows))
	if err := b.Sync(context.Background()); err != nil {
		return nil, err
	}
	v := make([]uint16, n)
	if err := b.h.dtoh(unsafe.Pointer(&v[0]), out, 2*n); err != nil {
		return nil, err
	}
	return v, nil
}

// F16Wants is f16Copies.wants with the defaults ($EMBER_CUDA_F16_* unset).
func F16Wants(rows, cols, n int) bool {
	return f16Copies{minRows: f16DefaultMinRows, minElems: f16DefaultMinElems}.wants(rows, cols, n)
}

// SetMMF turns the f16 product over quantized weights (mmf.go) on or off and sets the
// fewest activation rows it takes (0: the default).
func SetMMF(b *Backend, on bool, minRows int) { b.mf.on, b.mf.minRows = on, minRows }

// MMFProducts is the number of products b has run on mmf.
func MMFProducts(b *Backend) int { return b.mf.products }

// MMFFromEnv is mfFromEnv: whether mmf is off and the fewest rows it takes.
func MMFFromEnv() (off bool, minRows int, err error) {
	c, err := mfFromEnv()
	return !c.on, c.minRows, err
}

// MFSplits is mfSplits.
func MFSplits(mt, nt, steps, sms int) int { return mfSplits(mt, nt, steps, sms) }

// MMFPacks reports mmf's packed weight copies held and the device memory they hold.
func MMFPacks(b *Backend) (count, bytes int) { return b.mf.count, b.mf.bytes }

// MFKernel is mfKernel.
func MFKernel(n, nt int) string { return mfKernel(n, nt) }

// MFRows is mfRows of a backend with or without cuBLASLt and the f16 copies, cuBLASLt
// from ltMin rows, the copies from f16Min and mmf from mfMin (0: the default).
func MFRows(lt, copies bool, ltMin, f16Min, mfMin int) (least, most int) {
	b := &Backend{}
	if lt {
		b.lt.lib = &ltLib{}
	}
	b.lt.minRows, b.f16c.off, b.f16c.minRows, b.mf.minRows = ltMin, !copies, f16Min, mfMin
	return b.mfRows()
}

// SetLtPairs turns ltpair.go's batched pairs on or off.
func SetLtPairs(b *Backend, on bool) { b.lt.pairs = on }

// LtPaired is the number of products b has run in pairs on cuBLASLt.
func LtPaired(b *Backend) int { return b.lt.paired }

// SetLtTune turns lttune.go's timing of each plan's candidates on or off (for plans
// made from now on).
func SetLtTune(b *Backend, on bool) { b.lt.tune = on }

// LtTuned is the number of cuBLASLt plans b has tuned.
func LtTuned(b *Backend) int { return b.st.ltTuned }

// SetMMG turns mmg on from minRows rows for weights of any size (when its module loaded)
// or off; reports whether the module loaded.
func SetMMG(b *Backend, on bool, minRows int) bool {
	b.mg.off, b.mg.minRows, b.mg.minElems, b.mg.single = !on, minRows, 0, true
	return b.mg.loaded
}

// MMGProducts is the number of products b has run on mmg.
func MMGProducts(b *Backend) int { return b.mg.products }

// MMGPacks reports mmg's packed copies and the device memory they hold.
func MMGPacks(b *Backend) (count, bytes int) { return b.mg.count, b.mg.bytes }

// MMGFromEnv is mgFromEnv: whether mmg is off and the fewest rows it takes.
func MMGFromEnv() (off bool, minRows int, err error) {
	c, err := mgFromEnv()
	return c.off, c.minRows, err
}

// MGSplits is mgSplits.
func MGSplits(mt, steps, sms int) int { return mgSplits(mt, steps, sms) }
