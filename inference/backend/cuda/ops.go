package cuda

import (
	"fmt"
	"math"

	"ember/inference/backend"
	"ember/inference/quant"
)

// suffix names a weight type in the kernel names of kernels/cuda.
var suffix = map[quant.Type]string{
	quant.F32: "f32", quant.F16: "f16", quant.BF16: "bf16", quant.Q4_0: "q4_0", quant.Q4_1: "q4_1",
	quant.Q5_0: "q5_0", quant.Q5_1: "q5_1", quant.Q8_0: "q8_0", quant.Q2_K: "q2_k", quant.Q3_K: "q3_k",
	quant.Q4_K: "q4_k", quant.Q5_K: "q5_k", quant.Q6_K: "q6_k",
}

// blocks is the grid size for n elements, 256 threads a block, at most 4096 blocks
// (the kernels loop).
func blocks(n int) int { return max(1, min((n+255)/256, 4096)) }

// ids checks an I32 tensor of n entries (one row or one column).
func ids(bt backend.Tensor, n int, op string) *tensor {
	t := want(bt, quant.I32)
	if t.rows*t.cols != n {
		panic(fmt.Sprintf("cuda: %s: %d ids for %d rows", op, t.rows*t.cols, n))
	}
	return t
}

func sameShape(a, b *tensor, op string) {
	if a.rows != b.rows || a.cols != b.cols {
		panic(fmt.Sprintf("cuda: %s: shapes %dx%d and %dx%d differ", op, a.rows, a.cols, b.rows, b.cols))
	}
}

// GetRows implements backend.Ops.
func (b *Backend) GetRows(dst, table, idt backend.Tensor) {
	d, tb := want(dst, quant.F32), get(table)
	if d.cols != tb.cols {
		panic(fmt.Sprintf("cuda: GetRows: %d columns from a %d-column table", d.cols, tb.cols))
	}
	s, ok := suffix[tb.typ]
	if !ok {
		panic(fmt.Sprintf("cuda: GetRows from %v", tb.typ))
	}
	it := ids(idt, d.rows, "GetRows")
	nb := tb.cols / max(1, tb.typ.BlockSize())
	for r0 := 0; r0 < d.rows; r0 += maxGridY { // a row a grid row
		n := min(maxGridY, d.rows-r0)
		b.launch("get_rows_"+s, blocks(d.cols), n, 256, 0, ptr(d)+uint64(r0*d.stride), ptr(tb), i64(tb.stride),
			ptr(it)+uint64(4*r0), i64(d.cols), i64(nb))
	}
	if tb.typ == quant.F32 && d.rows <= maxGridY && d.stride == 4*d.cols {
		// one launch, which a Q8_K rounding of the rows it wrote may join (fuseQ8K)
		b.mark(fusable{kind: fuseGetRows, dst: d.ptr, rows: d.rows, cols: d.cols, args: []uint64{ptr(tb), i64(tb.stride), ptr(it)},
			mem: [2]span{spanOf(tb)}})
	}
}

// maxGridY is the most blocks a grid has along y; ops with a row a grid row launch in
// chunks of at most that many rows.
const maxGridY = 65535

// RMSNorm implements backend.Ops.
func (b *Backend) RMSNorm(dst, x, w backend.Tensor, eps float32) {
	d, xt, wt := want(dst, quant.F32), want(x, quant.F32), want(w, quant.F32)
	sameShape(d, xt, "RMSNorm")
	if wt.rows != 1 || wt.cols != xt.cols {
		panic("cuda: RMSNorm: weight is not one row of the input's width")
	}
	if b.fuseAddNorm(d, xt, wt, eps) {
		return
	}
	args := []uint64{ptr(d), ptr(xt), ptr(wt), i64(xt.cols), f32(eps)}
	b.launch("rms_norm", xt.rows, 1, 256, 0, args...)
	b.markFusable(fuseRMSNorm, d, args)
}

// binary queues the element-wise op name and returns its tensors.
func (b *Backend) binary(name string, dst, a, bb backend.Tensor) (d, at, bt *tensor) {
	d, at, bt = want(dst, quant.F32), want(a, quant.F32), want(bb, quant.F32)
	sameShape(d, at, name)
	if bt.cols != at.cols || (bt.rows != at.rows && bt.rows != 1) {
		panic(fmt.Sprintf("cuda: %s: %dx%d with %dx%d", name, at.rows, at.cols, bt.rows, bt.cols))
	}
	n := at.rows * at.cols
	b.launch(name, blocks(n), 1, 256, 0, ptr(d), ptr(at), ptr(bt), i64(n), i64(bt.rows*bt.cols))
	return d, at, bt
}

// Add implements backend.Ops. An RMSNorm of the sum may join it (fuse_ops.go).
func (b *Backend) Add(dst, a, bb backend.Tensor) {
	if b.fuseMoESumAdd(get(dst), get(a), get(bb)) {
		return
	}
	d, at, bt := b.binary("add_f32", dst, a, bb)
	if bt.rows == at.rows {
		b.mark(fusable{kind: fuseAdd, dst: d.ptr, rows: d.rows, cols: d.cols, args: []uint64{d.ptr, at.ptr, bt.ptr},
			mem: [2]span{spanOf(at), spanOf(bt)}})
	}
}

// Mul implements backend.Ops.
func (b *Backend) Mul(dst, a, bb backend.Tensor) { b.binary("mul_f32", dst, a, bb) }

// SwiGLU implements backend.Ops.
func (b *Backend) SwiGLU(dst, gate, up backend.Tensor) {
	d, g, u := want(dst, quant.F32), want(gate, quant.F32), want(up, quant.F32)
	sameShape(d, g, "SwiGLU")
	sameShape(d, u, "SwiGLU")
	n := d.rows * d.cols
	b.launch("swiglu_f32", blocks(n), 1, 256, 0, ptr(d), ptr(g), ptr(u), i64(n))
	b.markFusable(fuseSwiGLU, d, []uint64{ptr(d), ptr(g), ptr(u)})
}

// yarnCorrDims is backend's (llama.cpp's ggml_rope_yarn_corr_dims), for the kernel.
func yarnCorrDims(nDims, origCtx int, base, betaFast, betaSlow float32) (lo, hi float32) {
	corr := func(beta float32) float64 {
		return float64(nDims) * math.Log(float64(origCtx)/(float64(beta)*2*math.Pi)) / (2 * math.Log(float64(base)))
	}
	lo = float32(math.Max(0, math.Floor(corr(betaFast))))
	hi = float32(math.Min(float64(nDims-1), math.Ceil(corr(betaSlow))))
	return lo, hi
}

// RoPE implements backend.Ops. The kernel computes the angles as backend.RoPEAngles.
func (b *Backend) RoPE(x, pos backend.Tensor, r backend.RoPE) {
	xt := want(x, quant.F32)
	if r.HeadDim <= 0 || r.Dims <= 0 || r.Dims%2 != 0 || r.Dims > r.HeadDim || xt.cols%r.HeadDim != 0 {
		panic(fmt.Sprintf("cuda: RoPE: dims %d, head dim %d, width %d", r.Dims, r.HeadDim, xt.cols))
	}
	pt := ids(pos, xt.rows, "RoPE")
	args := append([]uint64{ptr(xt), ptr(pt), i64(xt.cols), i64(r.HeadDim), i64(r.Dims)}, ropeArgs(r)...)
	if b.fuseRoPE2(xt, args) {
		return
	}
	b.launch("rope_f32", xt.rows, 1, 128, 4*r.Dims, args...)
	b.mark(fusable{kind: fuseRoPE, dst: xt.ptr, rows: xt.rows, cols: xt.cols, args: args, mem: [2]span{spanOf(xt)}})
}

// ropeArgs are rope_f32's arguments after the dims (rope_table's): neox, theta scale,
// frequency scale, the frequency factors, and YaRN's extrapolation factor, correction
// range and magnitude scale.
func ropeArgs(r backend.RoPE) []uint64 {
	var factors *tensor
	if r.Factors != nil {
		factors = want(r.Factors, quant.F32)
		if factors.rows*factors.cols != r.Dims/2 {
			panic(fmt.Sprintf("cuda: RoPE: %d frequency factors for %d dims", factors.rows*factors.cols, r.Dims))
		}
	}
	freqScale, mscale := r.FreqScale, r.AttnFactor
	if freqScale == 0 {
		freqScale = 1
	}
	if mscale == 0 {
		mscale = 1
	}
	var lo, hi float32
	if r.ExtFactor != 0 {
		lo, hi = yarnCorrDims(r.Dims, r.OrigCtx, r.Base, r.BetaFast, r.BetaSlow)
		mscale *= 1 + 0.1*float32(math.Log(float64(1/freqScale)))
	}
	thetaScale := float32(math.Pow(float64(r.Base), -2/float64(r.Dims)))
	neox := 0
	if r.Style == backend.RoPENeoX {
		neox = 1
	}
	return []uint64{i64(neox), f32(thetaScale), f32(freqScale), ptr(factors), f32(r.ExtFactor), f32(lo), f32(hi), f32(mscale)}
}

// SetRows implements backend.Ops.
func (b *Backend) SetRows(dst, src, rows backend.Tensor) {
	d, s := get(dst), want(src, quant.F32)
	if d.cols != s.cols {
		panic(fmt.Sprintf("cuda: SetRows: %d columns into %d", s.cols, d.cols))
	}
	f16 := 0
	switch d.typ {
	case quant.F32:
	case quant.F16:
		f16 = 1
	default:
		panic(fmt.Sprintf("cuda: SetRows into %v", d.typ))
	}
	rt := ids(rows, s.rows, "SetRows")
	if s.rows <= maxGridY { // one launch, which the SetRows of another tensor may join
		args := []uint64{ptr(d), i64(f16), ptr(s), ptr(rt), i64(s.cols)}
		if b.fuseRoPESet(d, s, rt, args) || b.fuseRoPESetV(d, s, rt, args) || b.fuseRoPE1Set(d, s, rt, args) ||
			b.fuseSetRows2(d, s, rt, args) {
			return
		}
		b.launch("set_rows", blocks(s.cols), s.rows, 256, 0, args...)
		b.mark(fusable{kind: fuseSetRows, dst: d.ptr, rows: s.rows, cols: s.cols, args: args,
			mem: [2]span{spanOf(d), spanOf(s)}})
		return
	}
	for r0 := 0; r0 < s.rows; r0 += maxGridY {
		n := min(maxGridY, s.rows-r0)
		b.launch("set_rows", blocks(s.cols), n, 256, 0, ptr(d), i64(f16), ptr(s)+uint64(r0*s.stride), ptr(rt)+uint64(4*r0), i64(s.cols))
	}
}
