// Package ref is the reference backend: plain, single-threaded Go that is obviously
// correct. Every op follows the definition in package backend literally; faster backends
// are tested against it.
package ref

import (
	"context"
	"fmt"

	"ember/inference/backend"
	"ember/inference/quant"
)

// Backend is the reference backend. It is not safe for concurrent use: like a device
// stream, one goroutine issues its ops.
type Backend struct {
	_ byte // not empty: every New is a distinct backend (placements compare backends)
}

// New returns a reference backend.
func New() *Backend { return &Backend{} }

var _ backend.Backend = (*Backend)(nil)

// tensor is host memory. F32 tensors use f32, I32 tensors i32, every other type raw bytes
// in its block layout (rowBytes per row). A view shares the slices of its parent.
type tensor struct {
	typ        quant.Type
	rows, cols int
	f32        []float32
	i32        []int32
	raw        []byte
	rowBytes   int
	freed      bool
	view       bool
}

func (t *tensor) Type() quant.Type { return t.typ }
func (t *tensor) Rows() int        { return t.rows }
func (t *tensor) Cols() int        { return t.cols }

// Name implements backend.Backend.
func (*Backend) Name() string { return "ref" }

func rowBytes(typ quant.Type, cols int) (int, error) {
	if cols <= 0 {
		return 0, fmt.Errorf("ref: %d columns", cols)
	}
	n, err := quant.RowBytes(typ, uint64(cols))
	if err != nil {
		return 0, fmt.Errorf("ref: %w", err)
	}
	return int(n), nil
}

// Weight implements backend.Backend. F32 data is copied into a []float32; other types
// keep a reference to data.
func (*Backend) Weight(typ quant.Type, rows, cols int, data []byte) (backend.Tensor, error) {
	rb, err := rowBytes(typ, cols)
	if err != nil {
		return nil, err
	}
	if rows <= 0 || len(data) != rows*rb {
		return nil, fmt.Errorf("ref: weight of %d x %d %v needs %d bytes, got %d", rows, cols, typ, rows*rb, len(data))
	}
	t := &tensor{typ: typ, rows: rows, cols: cols, rowBytes: rb}
	switch typ {
	case quant.F32:
		t.f32 = make([]float32, rows*cols)
		if err := quant.Dequantize(quant.F32, data, t.f32); err != nil {
			return nil, fmt.Errorf("ref: %w", err)
		}
	case quant.I32:
		return nil, fmt.Errorf("ref: I32 weights: %w", backend.ErrUnsupported)
	default:
		if _, err := quant.Dot(typ); err != nil {
			if !canDequantize(typ) {
				return nil, fmt.Errorf("ref: %v weights: %w", typ, backend.ErrUnsupported)
			}
		}
		t.raw = data
	}
	return t, nil
}

func canDequantize(typ quant.Type) bool {
	bs := typ.BlockSize()
	if bs == 0 {
		return false
	}
	rb, _ := quant.RowBytes(typ, uint64(bs))
	return quant.Dequantize(typ, make([]byte, rb), make([]float32, bs)) == nil
}

// New implements backend.Backend for F32, F16, I32 and Q8_0 (a quantized KV cache).
func (*Backend) New(typ quant.Type, rows, cols int) (backend.Tensor, error) {
	if rows <= 0 || cols <= 0 {
		return nil, fmt.Errorf("ref: new tensor of %d x %d", rows, cols)
	}
	t := &tensor{typ: typ, rows: rows, cols: cols}
	switch typ {
	case quant.F32:
		t.f32 = make([]float32, rows*cols)
		t.rowBytes = 4 * cols
	case quant.I32:
		t.i32 = make([]int32, rows*cols)
		t.rowBytes = 4 * cols
	case quant.F16:
		t.rowBytes = 2 * cols
		t.raw = make([]byte, rows*t.rowBytes)
	case quant.Q8_0: // a quantized KV cache
		if cols%32 != 0 {
			return nil, fmt.Errorf("ref: new Q8_0 tensor of %d columns (not whole blocks of 32)", cols)
		}
		t.rowBytes = cols / 32 * 34
		t.raw = make([]byte, rows*t.rowBytes)
	default:
		return nil, fmt.Errorf("ref: new %v tensor: %w", typ, backend.ErrUnsupported)
	}
	return t, nil
}

// View implements backend.Backend.
func (*Backend) View(bt backend.Tensor, row0, n int) backend.Tensor {
	t := get(bt)
	if row0 < 0 || n <= 0 || row0+n > t.rows {
		panic(fmt.Sprintf("ref: view of rows [%d,%d) of a %d-row tensor", row0, row0+n, t.rows))
	}
	v := &tensor{typ: t.typ, rows: n, cols: t.cols, rowBytes: t.rowBytes, view: true}
	switch {
	case t.f32 != nil:
		v.f32 = t.f32[row0*t.cols : (row0+n)*t.cols]
	case t.i32 != nil:
		v.i32 = t.i32[row0*t.cols : (row0+n)*t.cols]
	default:
		v.raw = t.raw[row0*t.rowBytes : (row0+n)*t.rowBytes]
	}
	return v
}

// Reshape implements backend.Reshaper for F32 and I32 tensors.
func (*Backend) Reshape(bt backend.Tensor, rows, cols int) backend.Tensor {
	t := get(bt)
	if (t.typ != quant.F32 && t.typ != quant.I32) || rows <= 0 || cols <= 0 || rows*cols != t.rows*t.cols {
		panic(fmt.Sprintf("ref: reshape of a %dx%d %v tensor to %dx%d", t.rows, t.cols, t.typ, rows, cols))
	}
	v := *t
	v.rows, v.cols, v.rowBytes, v.view = rows, cols, 4*cols, true
	return &v
}

// Free implements backend.Backend.
func (*Backend) Free(bt backend.Tensor) {
	t := get(bt)
	if t.view {
		panic("ref: Free of a view")
	}
	t.freed = true
	t.f32, t.i32, t.raw = nil, nil, nil
}

// WriteF32 implements backend.Backend.
func (*Backend) WriteF32(dst backend.Tensor, src []float32) {
	t := want(dst, quant.F32)
	if len(src) != len(t.f32) {
		panic(fmt.Sprintf("ref: WriteF32 of %d values into %d", len(src), len(t.f32)))
	}
	copy(t.f32, src)
}

// WriteI32 implements backend.Backend.
func (*Backend) WriteI32(dst backend.Tensor, src []int32) {
	t := want(dst, quant.I32)
	if len(src) != len(t.i32) {
		panic(fmt.Sprintf("ref: WriteI32 of %d values into %d", len(src), len(t.i32)))
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
		return fmt.Errorf("ref: ReadF32 of %d values into %d", len(t.f32), len(dst))
	}
	copy(dst, t.f32)
	return nil
}

// Sync implements backend.Backend; ref runs every op when it is issued.
func (*Backend) Sync(ctx context.Context) error { return ctx.Err() }

// Close implements backend.Backend.
func (*Backend) Close() error { return nil }

func get(bt backend.Tensor) *tensor {
	t, ok := bt.(*tensor)
	if !ok {
		panic(fmt.Sprintf("ref: tensor %T is not from this backend", bt))
	}
	if t.freed {
		panic("ref: use of a freed tensor")
	}
	return t
}

func want(bt backend.Tensor, typ quant.Type) *tensor {
	t := get(bt)
	if t.typ != typ {
		panic(fmt.Sprintf("ref: tensor is %v, want %v", t.typ, typ))
	}
	return t
}

func sameShape(a, b *tensor, op string) {
	if a.rows != b.rows || a.cols != b.cols {
		panic(fmt.Sprintf("ref: %s: shapes %dx%d and %dx%d differ", op, a.rows, a.cols, b.rows, b.cols))
	}
}

// row returns the raw bytes of row r.
func (t *tensor) row(r int) []byte { return t.raw[r*t.rowBytes : (r+1)*t.rowBytes] }

// ids returns the I32 contents of an ids/positions tensor (one row or one column).
func ids(bt backend.Tensor, n int, op string) []int32 {
	t := want(bt, quant.I32)
	if len(t.i32) != n {
		panic(fmt.Sprintf("ref: %s: %d ids for %d rows", op, len(t.i32), n))
	}
	return t.i32
}
