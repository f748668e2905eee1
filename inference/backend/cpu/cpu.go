// Package cpu is the fast CPU backend: the C SIMD kernels of kernels/cpu driven by a
// persistent pool of worker goroutines, one per thread, with work split by rows. Tensors
// are host memory; weights stay in their GGUF bytes (usually a read-only mmap). A decode
// step allocates nothing: scratch space grows to the largest batch and stays.
package cpu

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"ember/inference/backend"
	"ember/inference/quant"
	kern "ember/kernels/cpu"
)

// Options configure the backend.
type Options struct {
	// Threads is the number of worker threads; 0 means one per core.
	Threads int
	// ISA forces an instruction-set path ("avx2", "scalar", ...); "" picks the best, or
	// the one named by $EMBER_CPU_ISA.
	ISA string
	// MapWeights keeps weights in the model file's mapping instead of copying the large
	// ones into huge-page memory (faster decode, longer load). $EMBER_CPU_MAP_WEIGHTS=1
	// sets it.
	MapWeights bool
}

// Backend runs ops on the CPU. Like a device stream it is driven by one goroutine at a
// time; its workers belong to it.
type Backend struct {
	k       kern.Kernels
	threads int
	pool    *pool
	t       task            // the op being run; read by the workers during pool.run
	exec    func(int, int)  // b.run bound once, so issuing an op allocates nothing
	xq      []byte          // activation rows quantized for MatMul
	wscr    [][]float32     // per-worker scratch (attention scores, rope angles)
	kv      [2]*tensor      // the K and V caches of the Attention being run
	seqRows [][]int32       // paged Attention: per sequence, the cache row of each position
	seqOf   []int32         // paged Attention: each query row's sequence; nil when contiguous
	one     [1]backend.Proj // MatMul's projection list, reused
	gs      []group         // the products of the MatMul being run, reused
	arena   arena           // weight copies on huge pages; empty with Options.MapWeights
	gqaMode attnMode        // how Attention splits its work (tests force a path)
	lat     latent          // the latent Attention being run (latent.go)
}

var (
	_ backend.Backend       = (*Backend)(nil)
	_ backend.GroupMatMuler = (*Backend)(nil)
)

// New starts a CPU backend.
func New(opt Options) (*Backend, error) {
	k, err := kern.Select()
	if opt.ISA != "" {
		k, err = kern.Parse(opt.ISA)
	}
	if err != nil {
		return nil, err
	}
	n := opt.Threads
	if n <= 0 {
		n = runtime.NumCPU()
	}
	if n > 256 {
		return nil, fmt.Errorf("cpu: %d threads is too many", n)
	}
	b := &Backend{k: k, threads: n, pool: newPool(n), wscr: make([][]float32, n)}
	b.exec = b.run
	if !opt.MapWeights && os.Getenv("EMBER_CPU_MAP_WEIGHTS") != "1" {
		b.arena = newArena()
	}
	return b, nil
}

// Name implements backend.Backend.
func (*Backend) Name() string { return "cpu" }

// ISA is the instruction-set path in use, with the extensions it uses (e.g.
// "avx2+avxvnni", "avx512vnni+bf16").
func (b *Backend) ISA() string { return b.k.Name() }

// Threads is the number of worker threads.
func (b *Backend) Threads() int { return b.threads }

// tensor is host memory: F32 in f32, I32 in i32, F16 tensors made by New in f16, and
// weights of any type in raw (their GGUF bytes).
type tensor struct {
	typ        quant.Type
	rows, cols int
	rowBytes   int
	f32        []float32
	i32        []int32
	f16        []uint16
	raw        []byte
	view       bool
	freed      bool
}

func (t *tensor) Type() quant.Type { return t.typ }
func (t *tensor) Rows() int        { return t.rows }
func (t *tensor) Cols() int        { return t.cols }

func (t *tensor) row(r int) []byte { return t.raw[r*t.rowBytes : (r+1)*t.rowBytes] }

func get(bt backend.Tensor) *tensor {
	t, ok := bt.(*tensor)
	if !ok {
		panic(fmt.Sprintf("cpu: tensor %T is not from this backend", bt))
	}
	if t.freed {
		panic("cpu: use of a freed tensor")
	}
	return t
}

func want(bt backend.Tensor, typ quant.Type) *tensor {
	t := get(bt)
	if t.typ != typ {
		panic(fmt.Sprintf("cpu: tensor is %v, want %v", t.typ, typ))
	}
	if (typ == quant.F32 && t.f32 == nil) || (typ == quant.F16 && t.f16 == nil) {
		panic(fmt.Sprintf("cpu: %v weight used as an activation", typ))
	}
	return t
}

// kernelType reports whether the kernels compute with t.
func kernelType(t quant.Type) bool {
	switch t {
	case quant.F32, quant.F16, quant.BF16, quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1,
		quant.Q8_0, quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K:
		return true
	}
	return false
}

// Weight implements backend.Backend. Large weights are copied into the huge-page arena
// (see arena); the others keep a reference to data, copied only when it is not 32-byte
// aligned.
func (b *Backend) Weight(typ quant.Type, rows, cols int, data []byte) (backend.Tensor, error) {
	if !kernelType(typ) {
		return nil, fmt.Errorf("cpu: %v weights: %w", typ, backend.ErrUnsupported)
	}
	rb, err := quant.RowBytes(typ, uint64(max(cols, 0)))
	if err != nil || cols <= 0 || rows <= 0 || len(data) != rows*int(rb) {
		return nil, fmt.Errorf("cpu: weight of %d x %d %v with %d bytes", rows, cols, typ, len(data))
	}
	if dst := b.arena.alloc(len(data)); dst != nil {
		parallelCopy(dst, data, b.threads)
		data = dst
	} else if uintptr(unsafe.Pointer(&data[0]))%32 != 0 {
		buf := make([]uint64, (len(data)+7)/8) // 8-byte aligned; Go's allocator gives 32 for large sizes
		cp := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(data))
		copy(cp, data)
		data = cp
	}
	return &tensor{typ: typ, rows: rows, cols: cols, rowBytes: int(rb), raw: data}, nil
}

// New implements backend.Backend for F32, F16, I32 and Q8_0 (a quantized KV cache).
func (*Backend) New(typ quant.Type, rows, cols int) (backend.Tensor, error) {
	if rows <= 0 || cols <= 0 {
		return nil, fmt.Errorf("cpu: new tensor of %d x %d", rows, cols)
	}
	t := &tensor{typ: typ, rows: rows, cols: cols}
	switch typ {
	case quant.F32:
		t.f32, t.rowBytes = make([]float32, rows*cols), 4*cols
	case quant.I32:
		t.i32, t.rowBytes = make([]int32, rows*cols), 4*cols
	case quant.F16:
		t.f16, t.rowBytes = make([]uint16, rows*cols), 2*cols
	case quant.Q8_0:
		if cols%32 != 0 {
			return nil, fmt.Errorf("cpu: new Q8_0 tensor of %d columns (not whole blocks of 32)", cols)
		}
		t.rowBytes = cols / 32 * 34
		t.raw = make([]byte, rows*t.rowBytes)
	default:
		return nil, fmt.Errorf("cpu: new %v tensor: %w", typ, backend.ErrUnsupported)
	}
	return t, nil
}

// View implements backend.Backend.
func (*Backend) View(bt backend.Tensor, row0, n int) backend.Tensor {
	t := get(bt)
	if row0 < 0 || n <= 0 || row0+n > t.rows {
		panic(fmt.Sprintf("cpu: view of rows [%d,%d) of a %d-row tensor", row0, row0+n, t.rows))
	}
	v := *t
	v.rows, v.view = n, true
	lo, hi := row0*t.cols, (row0+n)*t.cols
	switch {
	case t.f32 != nil:
		v.f32 = t.f32[lo:hi]
	case t.i32 != nil:
		v.i32 = t.i32[lo:hi]
	case t.f16 != nil:
		v.f16 = t.f16[lo:hi]
	default:
		v.raw = t.raw[row0*t.rowBytes : (row0+n)*t.rowBytes]
	}
	return &v
}

// Reshape implements backend.Reshaper for F32 and I32 tensors.
func (*Backend) Reshape(bt backend.Tensor, rows, cols int) backend.Tensor {
	t := get(bt)
	if (t.typ != quant.F32 && t.typ != quant.I32) || rows <= 0 || cols <= 0 || rows*cols != t.rows*t.cols {
		panic(fmt.Sprintf("cpu: reshape of a %dx%d %v tensor to %dx%d", t.rows, t.cols, t.typ, rows, cols))
	}
	v := *t
	v.rows, v.cols, v.rowBytes, v.view = rows, cols, 4*cols, true
	return &v
}

// Free implements backend.Backend.
func (b *Backend) Free(bt backend.Tensor) {
	t := get(bt)
	if t.view {
		panic("cpu: Free of a view")
	}
	if !t.freed && b.arena.owns(t.raw) {
		b.arena.release(t.raw)
	}
	t.freed = true
	t.f32, t.i32, t.f16, t.raw = nil, nil, nil, nil
}

// WriteF32 implements backend.Backend.
func (*Backend) WriteF32(dst backend.Tensor, src []float32) {
	t := want(dst, quant.F32)
	if len(src) != len(t.f32) {
		panic(fmt.Sprintf("cpu: WriteF32 of %d values into %d", len(src), len(t.f32)))
	}
	copy(t.f32, src)
}

// WriteI32 implements backend.Backend.
func (*Backend) WriteI32(dst backend.Tensor, src []int32) {
	t := want(dst, quant.I32)
	if len(src) != len(t.i32) {
		panic(fmt.Sprintf("cpu: WriteI32 of %d values into %d", len(src), len(t.i32)))
	}
	copy(t.i32, src)
}

// ReadF32 implements backend.Backend.
func (*Backend) ReadF32(ctx context.Context, src backend.Tensor, dst []float32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t := want(src, quant.F32)
	if len(dst) != len(t.f32) {
		return fmt.Errorf("cpu: ReadF32 of %d values into %d", len(t.f32), len(dst))
	}
	copy(dst, t.f32)
	return nil
}

// Sync implements backend.Backend; ops complete before they return.
func (*Backend) Sync(ctx context.Context) error { return ctx.Err() }

// Close stops the workers.
func (b *Backend) Close() error {
	if b.pool != nil {
		b.pool.close()
		b.pool = nil
	}
	b.arena.close()
	return nil
}
