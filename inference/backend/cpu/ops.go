package cpu

import (
	"fmt"

	"ember/inference/backend"
	"ember/inference/quant"
)

type opKind int

const (
	opQuantize opKind = iota
	opGemm
	opGetRows
	opRMSNorm
	opAdd
	opMul
	opSwiGLU
	opRoPE
	opSetRows
	opAttention
	opLatScores // the phases of latent Attention (latent.go)
	opLatProbs
	opLatValues
)

// task is the op being run. It lives in the Backend and is overwritten per op, so issuing
// an op allocates nothing; workers read it only inside pool.run.
type task struct {
	kind     opKind
	d, a, b  *tensor
	ids      []int32
	eps      float32
	vdt, xrb int
	rope     backend.RoPE
	factors  []float32
	attn     backend.Attention
	gqa      bool    // Attention: items are (query row, KV head), not (query row, head)
	n, align int     // work items and the granularity they are split at
	chunk    int     // items per chunk
	chunks   int     // chunks, claimed by the workers
	groups   []group // MatMul: the products, their weight rows laid end to end
}

// group is one product of a MatMul task: d = w times nx rows of the input, quantized to
// vdt (w's dot partner), from row x0.
type group struct {
	d, w   *tensor
	x0, nx int
	vdt    quant.Type
}

// parallelMin is the least work (in elements touched) worth waking the workers for.
const parallelMin = 1 << 14

// do runs the current task over t.n items: in chunks on all workers when the work is
// large enough, else on the calling goroutine.
func (b *Backend) do(work int) {
	t := &b.t
	if b.threads > 1 && work >= parallelMin && t.n > 1 {
		per, round := 4, 1
		if t.kind == opGemm {
			per, round = 6, 48 // the SIMD weight tiles are 16 or 24 rows
		}
		t.chunk, t.chunks = chunking(t.n, b.threads, t.align, per, round)
		b.pool.run(t.chunks, b.exec)
		return
	}
	t.chunk, t.chunks = t.n, 1
	b.run(0, 0)
}

// run is chunk c of the current task, on worker w.
func (b *Backend) run(w, c int) {
	t := &b.t
	lo, hi := c*t.chunk, min((c+1)*t.chunk, t.n)
	if lo >= hi {
		return
	}
	switch t.kind {
	case opQuantize:
		b.quantize(lo, hi)
	case opGemm:
		b.gemm(lo, hi)
	case opGetRows:
		b.getRows(lo, hi)
	case opRMSNorm, opAdd, opMul, opSwiGLU:
		b.rowwise(lo, hi)
	case opRoPE:
		b.rope(w, lo, hi)
	case opSetRows:
		b.setRows(lo, hi)
	case opAttention:
		b.attention(w, lo, hi)
	case opLatScores:
		b.latScores(lo, hi)
	case opLatProbs:
		b.latProbs(lo, hi)
	case opLatValues:
		b.latValues(lo, hi)
	}
}

func (b *Backend) set(kind opKind, d, a, bb *tensor, n, align int) {
	b.t = task{kind: kind, d: d, a: a, b: bb, n: n, align: align}
}

// MatMul implements backend.Ops: x is quantized to w's dot partner once, then the
// weight rows are split among the workers.
func (b *Backend) MatMul(dst, w, x backend.Tensor) {
	b.one[0] = backend.Proj{Dst: dst, W: w}
	b.MatMulShared(x, b.one[:])
}

// checkGroup validates one product of rows [row0, row0+dst rows) of xt and returns its
// weights and dot partner. dst may alias x: x is quantized into b.xq before any output is
// written.
func checkGroup(xt *tensor, dst, w backend.Tensor, row0 int) (*tensor, *tensor, quant.Type) {
	d, wt := want(dst, quant.F32), get(w)
	if xt.cols != wt.cols || row0 < 0 || row0+d.rows > xt.rows || d.cols != wt.rows || wt.raw == nil {
		panic(fmt.Sprintf("cpu: MatMul: w %dx%d, x %dx%d from row %d, dst %dx%d", wt.rows, wt.cols, xt.rows, xt.cols, row0, d.rows, d.cols))
	}
	vdt, ok := wt.typ.VecDotType()
	if !ok {
		panic(fmt.Sprintf("cpu: MatMul with %v weights", wt.typ))
	}
	return d, wt, vdt
}

// MatMulShared implements backend.SharedMatMuler: x is quantized once per dot partner,
// then the projections' weight rows are split among the workers, one pass per partner.
func (b *Backend) MatMulShared(x backend.Tensor, projs []backend.Proj) {
	xt := want(x, quant.F32)
	b.gs = b.gs[:0]
	for _, p := range projs {
		d, wt, vdt := checkGroup(xt, p.Dst, p.W, 0)
		b.gs = append(b.gs, group{d: d, w: wt, nx: xt.rows, vdt: vdt})
	}
	b.matMul(xt, b.gs)
}

// MatMulGroups implements backend.GroupMatMuler: x is quantized once per dot partner,
// then the groups' weight rows are split among the workers, one pass per partner, each
// against its rows of x.
func (b *Backend) MatMulGroups(x backend.Tensor, groups []backend.Group) {
	xt := want(x, quant.F32)
	b.gs = b.gs[:0]
	for _, g := range groups {
		d, wt, vdt := checkGroup(xt, g.Dst, g.W, g.Row0)
		b.gs = append(b.gs, group{d: d, w: wt, x0: g.Row0, nx: d.rows, vdt: vdt})
	}
	b.matMul(xt, b.gs)
}

// matMul runs the checked products gs of xt (reordering gs): one pass per dot partner
// (Q4_K and Q6_K share Q8_K; Q8_0 with Q4_K makes two).
func (b *Backend) matMul(xt *tensor, gs []group) {
	for len(gs) > 0 {
		n := 1 // the products with gs[0]'s partner, moved to the front
		for i := 1; i < len(gs); i++ {
			if gs[i].vdt == gs[0].vdt {
				gs[n], gs[i] = gs[i], gs[n]
				n++
			}
		}
		b.matMul1(xt, gs[:n])
		gs = gs[n:]
	}
}

// matMul1 runs products gs of xt that share one dot partner: x quantized once, all their
// weight rows split among the workers in one pass.
func (b *Backend) matMul1(xt *tensor, gs []group) {
	vdt := gs[0].vdt
	total, work := 0, 0
	for _, g := range gs {
		total += g.w.rows
		work += g.w.rows * max(g.nx, 4)
	}
	k, nx := xt.cols, xt.rows
	xrb, _ := quant.RowBytes(vdt, uint64(k))
	if need := nx * int(xrb); len(b.xq) < need {
		b.xq = make([]byte, need)
	}
	b.set(opQuantize, nil, xt, nil, nx, 1)
	b.t.vdt, b.t.xrb = int(vdt), int(xrb)
	b.do(nx * k)
	b.set(opGemm, nil, nil, nil, total, 8)
	b.t.vdt, b.t.xrb, b.t.groups = int(vdt), int(xrb), gs
	b.do(work * k)
}

func (b *Backend) quantize(lo, hi int) {
	t := &b.t
	k := t.a.cols
	x, y := t.a.f32[lo*k:hi*k], b.xq[lo*t.xrb:hi*t.xrb]
	if !b.k.QuantizeRows(t.vdt, x, y, hi-lo, k) {
		for r := 0; r < hi-lo; r++ {
			if err := quant.Quantize(quant.Type(t.vdt), x[r*k:(r+1)*k], y[r*t.xrb:(r+1)*t.xrb]); err != nil {
				panic("cpu: " + err.Error())
			}
		}
	}
}

// gemm computes rows [lo, hi) of the groups' weights laid end to end.
func (b *Backend) gemm(lo, hi int) {
	off := 0
	for i := range b.t.groups {
		g := &b.t.groups[i]
		if a, z := max(lo, off), min(hi, off+g.w.rows); a < z {
			b.gemm1(g, a-off, z-off)
		}
		off += g.w.rows
	}
}

func (b *Backend) gemm1(g *group, lo, hi int) {
	t := &b.t
	d, w, nx, k := g.d, g.w, g.nx, g.w.cols
	xq := b.xq[g.x0*t.xrb : (g.x0+nx)*t.xrb]
	if b.k.Gemm(int(w.typ), w.raw, w.rowBytes, xq, t.xrb, nx, k, lo, hi, d.f32, d.cols) {
		return
	}
	dot, err := quant.Dot(w.typ) // no kernel for this type on this path: the scalar oracle
	if err != nil {
		panic("cpu: " + err.Error())
	}
	for i := 0; i < nx; i++ {
		xr := xq[i*t.xrb : (i+1)*t.xrb]
		for r := lo; r < hi; r++ {
			d.f32[i*d.cols+r] = dot(w.row(r), xr, k)
		}
	}
}

// GetRows implements backend.Ops.
func (b *Backend) GetRows(dst, table, idt backend.Tensor) {
	d, tb := want(dst, quant.F32), get(table)
	ids := want(idt, quant.I32).i32
	if d.cols != tb.cols || len(ids) != d.rows {
		panic(fmt.Sprintf("cpu: GetRows: %d ids of %d columns from a %dx%d table", len(ids), d.cols, tb.rows, tb.cols))
	}
	for _, id := range ids {
		if id < 0 || int(id) >= tb.rows {
			panic(fmt.Sprintf("cpu: GetRows: id %d outside %d rows", id, tb.rows))
		}
	}
	b.set(opGetRows, d, tb, nil, d.rows, 1)
	b.t.ids = ids
	b.do(d.rows * d.cols)
}

func (b *Backend) getRows(lo, hi int) {
	d, tb, n := b.t.d, b.t.a, b.t.d.cols
	for i := lo; i < hi; i++ {
		id, out := int(b.t.ids[i]), d.f32[i*n:(i+1)*n]
		switch {
		case tb.f32 != nil:
			copy(out, tb.f32[id*n:(id+1)*n])
		case tb.f16 != nil:
			b.k.F16ToF32(tb.f16[id*n:(id+1)*n], out)
		case !b.k.DequantizeRow(int(tb.typ), tb.row(id), out):
			if err := quant.Dequantize(tb.typ, tb.row(id), out); err != nil {
				panic("cpu: " + err.Error())
			}
		}
	}
}

func (b *Backend) rowOp(kind opKind, dst, a, bb backend.Tensor, eps float32) {
	d, at := want(dst, quant.F32), want(a, quant.F32)
	if d.rows != at.rows || d.cols != at.cols {
		panic(fmt.Sprintf("cpu: op %d: %dx%d into %dx%d", kind, at.rows, at.cols, d.rows, d.cols))
	}
	bt := want(bb, quant.F32)
	if bt.cols != at.cols || (bt.rows != at.rows && bt.rows != 1) {
		panic(fmt.Sprintf("cpu: op %d: %dx%d with %dx%d", kind, at.rows, at.cols, bt.rows, bt.cols))
	}
	b.set(kind, d, at, bt, at.rows, 1)
	b.t.eps = eps
	b.do(at.rows * at.cols)
}

func (b *Backend) rowwise(lo, hi int) {
	t := &b.t
	n := t.a.cols
	for i := lo; i < hi; i++ {
		a, y := t.a.f32[i*n:(i+1)*n], t.d.f32[i*n:(i+1)*n]
		br := t.b.f32
		if t.b.rows != 1 {
			br = br[i*n : (i+1)*n]
		}
		switch t.kind {
		case opRMSNorm:
			b.k.RMSNorm(a, br, y, t.eps)
		case opAdd:
			b.k.Add(a, br, y)
		case opMul:
			b.k.Mul(a, br, y)
		case opSwiGLU:
			b.k.SwiGLU(a, br, y)
		}
	}
}

// RMSNorm implements backend.Ops.
func (b *Backend) RMSNorm(dst, x, w backend.Tensor, eps float32) {
	if wt := want(w, quant.F32); wt.rows != 1 {
		panic("cpu: RMSNorm: weight is not one row")
	}
	b.rowOp(opRMSNorm, dst, x, w, eps)
}

// Add implements backend.Ops.
func (b *Backend) Add(dst, a, bb backend.Tensor) { b.rowOp(opAdd, dst, a, bb, 0) }

// Mul implements backend.Ops.
func (b *Backend) Mul(dst, a, bb backend.Tensor) { b.rowOp(opMul, dst, a, bb, 0) }

// SwiGLU implements backend.Ops.
func (b *Backend) SwiGLU(dst, gate, up backend.Tensor) {
	if u := want(up, quant.F32); u.rows != want(gate, quant.F32).rows {
		panic("cpu: SwiGLU: gate and up differ in rows")
	}
	b.rowOp(opSwiGLU, dst, gate, up, 0)
}
