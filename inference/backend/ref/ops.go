package ref

import (
	"fmt"
	"math"

	"ember/inference/backend"
	"ember/inference/quant"
)

// GetRows implements backend.Ops.
func (*Backend) GetRows(dst, table, idt backend.Tensor) {
	d, tb := want(dst, quant.F32), get(table)
	if d.cols != tb.cols {
		panic(fmt.Sprintf("ref: GetRows: %d columns from a %d-column table", d.cols, tb.cols))
	}
	for i, id := range ids(idt, d.rows, "GetRows") {
		if id < 0 || int(id) >= tb.rows {
			panic(fmt.Sprintf("ref: GetRows: id %d outside %d rows", id, tb.rows))
		}
		out := d.f32[i*d.cols : (i+1)*d.cols]
		if tb.f32 != nil {
			copy(out, tb.f32[int(id)*tb.cols:])
			continue
		}
		if err := quant.Dequantize(tb.typ, tb.row(int(id)), out); err != nil {
			panic("ref: GetRows: " + err.Error())
		}
	}
}

// RMSNorm implements backend.Ops.
func (*Backend) RMSNorm(dst, x, w backend.Tensor, eps float32) {
	d, xt, wt := want(dst, quant.F32), want(x, quant.F32), want(w, quant.F32)
	sameShape(d, xt, "RMSNorm")
	if wt.rows != 1 || wt.cols != xt.cols {
		panic("ref: RMSNorm: weight is not one row of the input's width")
	}
	n := xt.cols
	for i := 0; i < xt.rows; i++ {
		in, out := xt.f32[i*n:(i+1)*n], d.f32[i*n:(i+1)*n]
		var sum float64
		for _, v := range in {
			sum += float64(v) * float64(v)
		}
		mean := float32(sum / float64(n))
		scale := float32(1 / math.Sqrt(float64(mean+eps)))
		for j, v := range in {
			out[j] = v * scale * wt.f32[j]
		}
	}
}

// MatMul implements backend.Ops.
func (*Backend) MatMul(dst, w, x backend.Tensor) {
	d, wt, xt := want(dst, quant.F32), get(w), want(x, quant.F32)
	if xt.cols != wt.cols || d.rows != xt.rows || d.cols != wt.rows {
		panic(fmt.Sprintf("ref: MatMul: w %dx%d, x %dx%d, dst %dx%d", wt.rows, wt.cols, xt.rows, xt.cols, d.rows, d.cols))
	}
	k := xt.cols
	out := make([]float32, wt.rows) // dst may alias x
	if wt.typ == quant.F32 {
		for i := 0; i < xt.rows; i++ {
			xr := xt.f32[i*k : (i+1)*k]
			for r := 0; r < wt.rows; r++ {
				var s float64
				for j, v := range wt.f32[r*k : (r+1)*k] {
					s += float64(v) * float64(xr[j])
				}
				out[r] = float32(s)
			}
			copy(d.f32[i*d.cols:], out)
		}
		return
	}
	vdt, ok := wt.typ.VecDotType()
	dot, err := quant.Dot(wt.typ)
	if !ok || err != nil {
		panic(fmt.Sprintf("ref: MatMul: no dot product for %v weights", wt.typ))
	}
	xb, _ := quant.RowBytes(vdt, uint64(k))
	xq := make([]byte, xb)
	for i := 0; i < xt.rows; i++ {
		if err := quant.Quantize(vdt, xt.f32[i*k:(i+1)*k], xq); err != nil {
			panic("ref: MatMul: " + err.Error())
		}
		for r := 0; r < wt.rows; r++ {
			out[r] = dot(wt.row(r), xq, k)
		}
		copy(d.f32[i*d.cols:], out)
	}
}

func broadcast(op string, a, b *tensor) func(i int) []float32 {
	if b.cols != a.cols || (b.rows != a.rows && b.rows != 1) {
		panic(fmt.Sprintf("ref: %s: %dx%d with %dx%d", op, a.rows, a.cols, b.rows, b.cols))
	}
	return func(i int) []float32 {
		if b.rows == 1 {
			return b.f32
		}
		return b.f32[i*b.cols : (i+1)*b.cols]
	}
}

// Add implements backend.Ops.
func (*Backend) Add(dst, a, b backend.Tensor) {
	d, at, bt := want(dst, quant.F32), want(a, quant.F32), want(b, quant.F32)
	sameShape(d, at, "Add")
	brow := broadcast("Add", at, bt)
	for i := 0; i < at.rows; i++ {
		br := brow(i)
		for j := 0; j < at.cols; j++ {
			d.f32[i*at.cols+j] = at.f32[i*at.cols+j] + br[j]
		}
	}
}

// Mul implements backend.Ops.
func (*Backend) Mul(dst, a, b backend.Tensor) {
	d, at, bt := want(dst, quant.F32), want(a, quant.F32), want(b, quant.F32)
	sameShape(d, at, "Mul")
	brow := broadcast("Mul", at, bt)
	for i := 0; i < at.rows; i++ {
		br := brow(i)
		for j := 0; j < at.cols; j++ {
			d.f32[i*at.cols+j] = at.f32[i*at.cols+j] * br[j]
		}
	}
}

// SwiGLU implements backend.Ops.
func (*Backend) SwiGLU(dst, gate, up backend.Tensor) {
	d, g, u := want(dst, quant.F32), want(gate, quant.F32), want(up, quant.F32)
	sameShape(d, g, "SwiGLU")
	sameShape(d, u, "SwiGLU")
	for i, x := range g.f32 {
		d.f32[i] = x / (1 + float32(math.Exp(float64(-x)))) * u.f32[i]
	}
}

// SetRows implements backend.Ops.
func (*Backend) SetRows(dst, src, rows backend.Tensor) {
	d, s := get(dst), want(src, quant.F32)
	if d.cols != s.cols {
		panic(fmt.Sprintf("ref: SetRows: %d columns into %d", s.cols, d.cols))
	}
	for i, r := range ids(rows, s.rows, "SetRows") {
		if r < 0 || int(r) >= d.rows {
			panic(fmt.Sprintf("ref: SetRows: row %d outside %d", r, d.rows))
		}
		in := s.f32[i*s.cols : (i+1)*s.cols]
		switch d.typ {
		case quant.F32:
			copy(d.f32[int(r)*d.cols:], in)
		case quant.F16, quant.Q8_0:
			if err := quant.Quantize(d.typ, in, d.row(int(r))); err != nil {
				panic("ref: SetRows: " + err.Error())
			}
		default:
			panic(fmt.Sprintf("ref: SetRows into %v", d.typ))
		}
	}
}
