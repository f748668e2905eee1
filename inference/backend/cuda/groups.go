package cuda

import (
	"fmt"

	"ember/inference/backend"
	"ember/inference/quant"
)

var _ backend.GroupMatMuler = (*Backend)(nil)
var _ backend.Reshaper = (*Backend)(nil)

// Reshape implements backend.Reshaper for F32 and I32 tensors with contiguous rows.
func (b *Backend) Reshape(bt backend.Tensor, rows, cols int) backend.Tensor {
	t := get(bt)
	if (t.typ != quant.F32 && t.typ != quant.I32) || rows <= 0 || cols <= 0 || rows*cols != t.rows*t.cols || t.stride != 4*t.cols {
		panic(fmt.Sprintf("cuda: reshape of a %dx%d %v tensor (stride %d) to %dx%d", t.rows, t.cols, t.typ, t.stride, rows, cols))
	}
	return &tensor{typ: t.typ, rows: rows, cols: cols, stride: 4 * cols, ptr: t.ptr, view: true}
}

// runRowsMax is the most rows per product for which a uniform run of products (see
// uniform) goes to mmv_id in one launch; larger products take the batched kernels.
const runRowsMax = 4

// product is one dst = w * (rows of the activation from row0).
type product struct {
	d, w *tensor
	row0 int
}

// uniform reports whether ps are products of equal shape by matrices equally spaced in
// memory (per-head views of one matrix), over consecutive activation rows (or all the
// same rows: shared), into consecutive dst rows: then mmv_id computes them all in one
// launch. es is the byte distance between consecutive matrices.
func uniform(ps []product, shared bool) (es int64, ok bool) {
	r := ps[0].d.rows
	if r > runRowsMax || (shared && r != 1) {
		return 0, false
	}
	return uniformRun(ps, shared)
}

// uniformRun is uniform for any number of rows per product: with mmqMinRows or more
// (and a type mmqTakes), mmq_run computes them in one launch. Products of one row may
// write rows spaced further apart than a row (dstSpacing: the latent columns of
// DeepSeek's [rope | latent] query rows, one head's a product).
func uniformRun(ps []product, shared bool) (es int64, ok bool) {
	p0 := ps[0]
	r := p0.d.rows
	if len(ps) < 2 {
		return 0, false
	}
	es, ds := int64(ps[1].w.ptr)-int64(p0.w.ptr), dstSpacing(ps)
	if ds < int64(r*p0.d.stride) || ds%4 != 0 {
		return 0, false
	}
	for i, p := range ps {
		row0 := p0.row0 + i*r
		if shared {
			row0 = p0.row0
		}
		if p.w.typ != p0.w.typ || p.w.rows != p0.w.rows || p.w.stride != p0.w.stride || p.d.rows != r ||
			p.d.stride != p0.d.stride || p.row0 != row0 || int64(p.w.ptr)-int64(p0.w.ptr) != int64(i)*es ||
			int64(p.d.ptr)-int64(p0.d.ptr) != int64(i)*ds {
			return 0, false
		}
	}
	return es, true
}

// dstSpacing is the bytes from one product's output to the next in a run: r rows of
// their stride, or for products of one row (two or more) the distance between the first
// two.
func dstSpacing(ps []product) int64 {
	p0 := ps[0]
	if p0.d.rows == 1 && len(ps) > 1 {
		return int64(ps[1].d.ptr) - int64(p0.d.ptr)
	}
	return int64(p0.d.rows * p0.d.stride)
}

// mmvRun computes uniform products ps (es bytes between matrices) from the quantized
// activation xq (rows of xstride bytes) in one mmv_id launch: row z of the run is row
// z % r of product z / r; with shared, every product reads the same r = 1 row. A second
// run ps2 (nil for none) of as many products with the same weight type, row length and
// spacing, and the same activation rows, runs in the same launch (mmv_id's y = 1
// blocks): a head's q_pe beside its q_nope.
func (b *Backend) mmvRun(ps, ps2 []product, es int64, xq uint64, xstride int, shared bool) {
	p0 := ps[0]
	w, r := p0.w, p0.d.rows
	M := w.rows
	nrb := idRowBlocks(w.typ, M, w.cols)
	xdiv := 1
	if shared {
		xdiv = len(ps) * r // every row z reads activation row 0 (r is 1)
	}
	second, gy := mmvSecond(nil, nil, 0, 0, 0), 1
	if ps2 != nil {
		q := ps2[0]
		second, gy = mmvSecond(q.w, q.d, runRowStride(ps2), q.w.rows, idRowBlocks(q.w.typ, q.w.rows, q.w.cols)), 2
	}
	b.launch(b.runKernel(w.typ, ps, ps2), nrb*len(ps)*r, gy, 128, mv1Smem(w.typ, w.cols), append([]uint64{ptr(w), i64(w.stride),
		xq + uint64(p0.row0*xstride), i64(xstride), ptr(p0.d), i64(runRowStride(ps)), i64(M), i64(w.cols), 1, 0, uint64(es), i64(xdiv),
		i64(nrb), i64(r)}, second...)...)
}

// NoIDWEnv names an environment variable: when set, runs of per-head products whose
// matrices are weights take mmv_id like any other run, not mmv_idw (for timing).
const NoIDWEnv = "EMBER_CUDA_NO_IDW"

// runKernel is the kernel of mmvRun's launch: mmv_idw_ (the first weight loads before the
// wait) when every matrix of ps and ps2 is a weight or a view of one and the type has
// it (the mv1 types), else mmv_id_.
func (b *Backend) runKernel(t quant.Type, ps, ps2 []product) string {
	name := "mmv_id_" + suffix[t]
	if b.noIDW || !mv1Type(t) {
		return name
	}
	for _, run := range [][]product{ps, ps2} {
		for _, p := range run {
			if !p.w.weight && !p.w.ofWeight {
				return name
			}
		}
	}
	return "mmv_idw_" + suffix[t]
}

// pairedMV reports whether mmv_id computes a second product in its y = 1 blocks for
// weights of type t: the batch-1 kernels of Q4_K, Q6_K, Q8_0, Q5_K, Q2_K, Q3_K, F16 and
// BF16 (mv1) do;
// the generic ones (mmv_generic, whose activation row group is blockIdx.y) leave it
// unwritten, as the H200 showed (TestConformance/HeadProducts with Q5_0 heads, when
// DeepSeek's F16 experts were generic).
func pairedMV(t quant.Type) bool {
	switch t {
	case quant.Q4_K, quant.Q6_K, quant.Q8_0, quant.Q5_K, quant.Q2_K, quant.Q3_K, quant.F16, quant.BF16:
		return true
	}
	return false
}

// runRowStride is mmv_id's output row stride, in floats, for the uniform run ps: row z
// of the run at z times it (r rows a product: their row length; one row a product: the
// products' spacing, dstSpacing).
func runRowStride(ps []product) int {
	if ps[0].d.rows == 1 {
		return int(dstSpacing(ps) / 4)
	}
	return ps[0].d.cols
}

// mmvSecond is mmv_id's arguments for its second product (W2, D2, its row stride ds in
// floats, M2 and its row blocks nrb): the m-row matrices from w's first into d, or none
// (all 0).
func mmvSecond(w, d *tensor, ds, m, nrb int) []uint64 {
	if w == nil {
		return []uint64{0, 0, 0, 0, 0}
	}
	return []uint64{ptr(w), ptr(d), i64(ds), i64(m), i64(nrb)}
}

// pairRuns reports whether two uniform runs of batch-1 products can share one mmv_id
// launch (mmvRun's ps2): as many products of as many rows, the same weight type (one
// whose mmv_id is mv1's: pairedMV), row length and stride, the same spacing between
// matrices and the same activation rows.
func pairRuns(a, c []product, esA, esC int64) bool {
	if len(a) != len(c) || esA != esC {
		return false
	}
	wa, wc := a[0].w, c[0].w
	return pairedMV(wa.typ) && wa.typ == wc.typ && wa.cols == wc.cols && wa.stride == wc.stride && a[0].row0 == c[0].row0 &&
		a[0].d.rows == c[0].d.rows
}

// MatMulGroups implements backend.GroupMatMuler: x is rounded once per dot partner, then
// each group's rows are multiplied; a uniform run of groups of few rows (per-head
// projections in decode) is one launch.
func (b *Backend) MatMulGroups(x backend.Tensor, groups []backend.Group) {
	xt := want(x, quant.F32)
	ps := make([]product, len(groups))
	for i, g := range groups {
		d, w := want(g.Dst, quant.F32), get(g.W)
		if g.Row0 < 0 || g.Row0+d.rows > xt.rows || w.cols != xt.cols || d.cols != w.rows {
			panic(fmt.Sprintf("cuda: MatMulGroups: group %d: rows [%d,%d) of %dx%d by w %dx%d into %dx%d",
				i, g.Row0, g.Row0+d.rows, xt.rows, xt.cols, w.rows, w.cols, d.rows, d.cols))
		}
		if _, ok := suffix[w.typ]; !ok {
			panic(fmt.Sprintf("cuda: MatMulGroups: no kernel for %v weights", w.typ))
		}
		ps[i] = product{d, w, g.Row0}
	}
	b.products(xt, ps)
}

// quants are an activation's roundings to dot partners, made once each.
type quants struct {
	vts     [4]quant.Type
	xqs     [4]uint64
	strides [4]int
	n       int
}

// get returns x rounded to vt (quantizing it on first use) and its row stride.
func (q *quants) get(b *Backend, xt *tensor, vt quant.Type) (uint64, int) {
	for i := 0; i < q.n; i++ {
		if q.vts[i] == vt {
			return q.xqs[i], q.strides[i]
		}
	}
	if q.n == len(q.vts) {
		panic("cuda: more than 4 activation formats in one fused product")
	}
	q.vts[q.n] = vt
	q.xqs[q.n], q.strides[q.n] = b.quantize(xt, vt)
	q.n++
	return q.xqs[q.n-1], q.strides[q.n-1]
}

// products rounds x once per dot partner that ps need, before any product writes its
// output, and computes them.
func (b *Backend) products(xt *tensor, ps []product) {
	es, run := uniform(ps, false)
	if run && (b.absorbFuse(xt, ps, es) || b.vbFuse(xt, ps, es)) {
		return
	}
	var q quants
	for _, p := range ps {
		q.get(b, xt, partner(p.w.typ))
	}
	if run {
		if xq, stride := q.get(b, xt, partner(ps[0].w.typ)); xq != 0 {
			b.mmvRun(ps, nil, es, xq, stride, false)
		}
		return
	}
	if es, ok := b.mmqRunTakes(ps, false); ok {
		if xq, stride := q.get(b, xt, partner(ps[0].w.typ)); xq != 0 {
			b.mmqRun(ps, es, xq, stride, false)
		}
		return
	}
	for _, p := range ps {
		if xq, stride := q.get(b, xt, partner(p.w.typ)); xq != 0 {
			b.mmv(p.d, p.w, xq+uint64(p.row0*stride), stride, p.d.rows)
		}
	}
}

// sharedRuns computes the projections of one activation row as uniform runs (the whole
// list, or its even and its odd entries: per-head views of two matrices, interleaved),
// one launch each, after the lead projections of one row in one mmv_multi launch (nil
// for none; the same dot partner); false, having done nothing, when they are not.
func (b *Backend) sharedRuns(xt *tensor, lead, projs []backend.Proj) bool {
	if (xt.rows != 1 && xt.rows < mmqMinRows) || len(projs) < 4 {
		return false
	}
	var leadVT quant.Type
	if lead != nil {
		vt, ok := multiTakes(xt, lead)
		if !ok {
			return false
		}
		leadVT = vt
	}
	// A run of one row goes to mmv_id, of mmqMinRows or more to mmq_run; es is the byte
	// distance between its matrices.
	type run struct {
		ps []product
		es int64
	}
	runOf := func(ps []product) (run, bool) {
		var es int64
		var ok bool
		if xt.rows == 1 {
			es, ok = uniform(ps, true)
		} else {
			es, ok = b.mmqRunTakes(ps, true)
		}
		return run{ps, es}, ok
	}
	ps := make([]product, len(projs))
	for i, p := range projs {
		d, w := want(p.Dst, quant.F32), get(p.W)
		checkMatMul(d, w, xt)
		ps[i] = product{d, w, 0}
	}
	all, ok := runOf(ps)
	runs := []run{all}
	if !ok {
		if len(ps)%2 != 0 {
			return false
		}
		ev, od := make([]product, 0, len(ps)/2), make([]product, 0, len(ps)/2)
		for i, p := range ps {
			if i%2 == 0 {
				ev = append(ev, p)
			} else {
				od = append(od, p)
			}
		}
		re, ok1 := runOf(ev)
		ro, ok2 := runOf(od)
		if !ok1 || !ok2 {
			return false
		}
		runs = []run{re, ro}
	}
	for _, r := range runs {
		if lead != nil && partner(r.ps[0].w.typ) != leadVT {
			return false
		}
	}
	var q quants
	for _, p := range ps {
		q.get(b, xt, partner(p.w.typ))
	}
	if lead != nil {
		if xq, stride := q.get(b, xt, leadVT); xq != 0 {
			b.multiLaunch(xt, lead, xq, stride)
		}
	}
	if xt.rows == 1 && len(runs) == 2 && !b.fuseOff() && pairRuns(runs[0].ps, runs[1].ps, runs[0].es, runs[1].es) {
		if xq, stride := q.get(b, xt, partner(runs[0].ps[0].w.typ)); xq != 0 {
			b.mmvRun(runs[0].ps, runs[1].ps, runs[0].es, xq, stride, true)
		}
		return true
	}
	for _, r := range runs {
		xq, stride := q.get(b, xt, partner(r.ps[0].w.typ))
		switch {
		case xq == 0:
		case xt.rows == 1:
			b.mmvRun(r.ps, nil, r.es, xq, stride, true)
		default:
			b.mmqRun(r.ps, r.es, xq, stride, true)
		}
	}
	return true
}

// mmqRunTakes reports whether ps are a uniform run (uniformRun) that mmq_run takes:
// mmqMinRows or more rows per product, of a type and row length mmqTakes.
func (b *Backend) mmqRunTakes(ps []product, shared bool) (int64, bool) {
	if len(ps) < 2 || ps[0].d.rows < mmqMinRows || !b.mmqTakes(ps[0].w) || !b.mmqFits(ps[0].w.typ, mmqTN) ||
		len(ps)*((ps[0].d.rows+mmqTN-1)/mmqTN) > maxGridY {
		return 0, false
	}
	es, ok := uniformRun(ps, shared)
	if !ok || es%8 != 0 { // the kernels copy 8-byte pieces at the least (mmqTakes)
		return 0, false
	}
	return es, true
}

// mmqRun computes the uniform run ps (es bytes between matrices) from the quantized
// activation xq (rows of xstride bytes) in one mmq_run launch: product h reads rows
// h*r.. of the activation from ps[0].row0, or with shared rows 0..r-1, r = its rows.
// The K steps are divided among blocks (partial sums, then mmq_reduce) as mmq divides a
// product's when the tiles would not fill the GPU.
func (b *Backend) mmqRun(ps []product, es int64, xq uint64, xstride int, shared bool) {
	p0 := ps[0]
	w, r := p0.w, p0.d.rows
	mt, tiles, N := (w.rows+mmqTM-1)/mmqTM, len(ps)*((r+mmqTN-1)/mmqTN), len(ps)*r
	splits := mmqSplits(mt, tiles, (w.cols+255)/256)
	if tiles*splits > maxGridY {
		splits = 1
	}
	part, ok := b.mmqParts(splits, N, w.rows)
	if !ok {
		return
	}
	b.launch("mmq_run_"+suffix[w.typ], mt, tiles*splits, mmqThreads, mmqStages*mmqStageBytes(w.typ, mmqTN), ptr(w),
		i64(w.stride), xq+uint64(p0.row0*xstride), i64(xstride), ptr(p0.d), i64(p0.d.cols), i64(w.rows), i64(w.cols),
		i64(r), uint64(es), i64(b2i(shared)), part, i64(splits))
	b.mmqReduce(p0.d, part, w.rows, N, splits)
}
