package cuda

import (
	"fmt"

	"ember/inference/backend"
	"ember/inference/quant"
)

// partner is the activation format a weight type's dots take: its dot partner, except
// that F32 weights read a copy of x (so that dst may alias x).
func partner(w quant.Type) quant.Type {
	vt, _ := w.VecDotType()
	return vt
}

// actStride is the bytes of one quantized activation row of k elements of type vt
// (kernels/cuda/common.cuh).
func actStride(vt quant.Type, k int) int {
	switch vt {
	case quant.F16, quant.BF16:
		return align16(2 * k)
	case quant.Q8_0:
		return align16(k + 4*(k/32))
	case quant.Q8_1:
		return align16(k + 8*(k/32))
	case quant.Q8_K:
		return align16(k + align16(4*(k/256)) + 4*(k/16)) // Q8K_BSUMS
	}
	return align16(4 * k)
}

// scratch is a device buffer for quantized activations, grown as needed.
type scratch struct {
	ptr  uint64
	size int
}

func (b *Backend) scratchFor(s *scratch, n int) uint64 {
	if s.size >= n {
		return s.ptr
	}
	n = align16(max(n, 2*s.size))
	p, err := b.allocScratch(s, n)
	if err != nil {
		b.fail(fmt.Errorf("cuda: activation scratch of %d bytes: %w", n, err))
		return 0
	}
	return p
}

// allocScratch gives s a new buffer of n bytes. A buffer outgrown stays allocated until
// Close: ops still queued may read it.
func (b *Backend) allocScratch(s *scratch, n int) (uint64, error) {
	p, err := b.h.alloc(n)
	if err != nil {
		return 0, err
	}
	b.scratches = append(b.scratches, p)
	s.ptr, s.size = p, n
	return p, nil
}

// quantize rounds the rows of x to vt into a scratch buffer and returns it and its row
// stride.
func (b *Backend) quantize(x *tensor, vt quant.Type) (uint64, int) {
	k, n := x.cols, x.rows
	stride := actStride(vt, k)
	if out, st, ok := b.br.take(x, vt); ok {
		return out, st
	}
	pin := b.br.pinAt(len(b.queue.fns))
	s := b.act[vt]
	if pin {
		s = &b.br.pin
	} else if s == nil {
		s = &scratch{}
		b.act[vt] = s
	}
	out := b.scratchFor(s, n*stride)
	if out == 0 {
		return 0, 0
	}
	if vt == quant.Q8_K && n <= maxGridY && b.fuseQ8K(x, out, stride) ||
		(vt == quant.Q8_0 || vt == quant.Q8_1) && b.fuseQ8(x, out, stride, b2i(vt == quant.Q8_1)) {
		if pin { // fused into the fork launch (a fusion queues its launch in the one it replaces)
			b.br.pinned = pinnedAct{x: *x, vt: vt, out: out, stride: stride}
		}
		return out, stride
	}
	for r0 := 0; r0 < n; r0 += maxGridY { // a row a grid row
		rows, o, xp := min(maxGridY, n-r0), out+uint64(r0*stride), ptr(x)+uint64(r0*x.stride)
		switch vt {
		case quant.Q8_0, quant.Q8_1:
			s1 := 0
			if vt == quant.Q8_1 {
				s1 = 1
			}
			b.launch("quant_q8", (k/32+7)/8, rows, 256, 0, o, i64(stride), xp, i64(k), i64(s1))
		case quant.Q8_K:
			b.launch("quant_q8_k", q8kwGrid(k), rows, 32*q8kwWarps, 0, o, i64(stride), xp, i64(k))
		case quant.F16, quant.BF16:
			bf := 0
			if vt == quant.BF16 {
				bf = 1
			}
			b.launch("quant_half", blocks(k), rows, 256, 0, o, i64(stride), xp, i64(k), i64(bf))
		default:
			b.launch("quant_f32", blocks(k), rows, 256, 0, o, i64(stride), xp, i64(k))
		}
	}
	return out, stride
}

func checkMatMul(d, w, x *tensor) {
	if x.cols != w.cols || d.rows != x.rows || d.cols != w.rows {
		panic(fmt.Sprintf("cuda: MatMul: w %dx%d, x %dx%d, dst %dx%d", w.rows, w.cols, x.rows, x.cols, d.rows, d.cols))
	}
	if _, ok := suffix[w.typ]; !ok {
		panic(fmt.Sprintf("cuda: MatMul: no kernel for %v weights", w.typ))
	}
}

// mmvNames caches the matrix-vector kernel names by weight type and batch width.
var mmvNames = func() map[quant.Type][9]string {
	m := map[quant.Type][9]string{}
	for t, s := range suffix {
		var n [9]string
		for _, nx := range []int{1, 2, 4, 8} {
			n[nx] = fmt.Sprintf("mmv_%s_%d", s, nx)
		}
		m[t] = n
	}
	return m
}()

func mmvName(t quant.Type, nx int) string { return mmvNames[t][nx] }

// rowsPerBlock is the weight rows one block of a mat-vec kernel of nx activation rows
// over k columns takes: four warps a block; for nx = 1, Q4_K, Q4_0, Q5_0, Q4_1 and Q5_1
// warps take four rows, Q8_0 warps three and Q6_K, Q5_K, Q2_K, Q3_K, F16 and BF16 warps two
// (Q4K_R1, Q80_R1, Q50_R1, Q6K_R1, Q5K_R1, Q23_R1, HALF_R1 in mv1.cuh, mv1x.cuh and
// mv1lo.cuh; mmv_id's Q8_0 warps two: idRowsPerBlock);
// for nx > 1, Q4_K and Q5_K warps take two (Q4K_ROWS, mmv_q5_k_nx) and Q6_K and Q8_0
// warps one. The generic kernel (mmv_generic in mmvgen.cuh) takes an F32, F16 or BF16 row
// a block, and a row of nb quantized blocks in L lanes (nb rounded up to a power of two,
// at most 32), 32 / L rows a warp.
// mmv_multi computes as nx = 1, mmv_id as idRowsPerBlock says.
func rowsPerBlock(t quant.Type, nx, k int) int {
	switch {
	case nx == 1 && (t == quant.Q4_K || t == quant.Q4_0 || t == quant.Q5_0 || t == quant.Q4_1 || t == quant.Q5_1):
		return 16
	case nx == 1 && t == quant.Q8_0:
		return 12
	case nx == 1 && (t == quant.Q6_K || t == quant.F16 || t == quant.BF16 || t == quant.Q2_K || t == quant.Q3_K), t == quant.Q4_K, t == quant.Q5_K:
		return 8
	case t == quant.Q6_K || t == quant.Q8_0:
		return 4
	case t == quant.F32 || t == quant.F16 || t == quant.BF16:
		return 1
	}
	nb := k / t.BlockSize()
	lanes := 1
	for lanes < min(nb, 32) {
		lanes *= 2
	}
	return 4 * 32 / lanes
}

// idRowsPerBlock is the weight rows one block of mmv_id (a row's own matrix: a mixture
// of experts' rows, per-head projections) takes over k columns: Q8_0 warps two rows
// (Q80_ID_R1 in mv1.cuh), the other types as the batch-1 kernels.
func idRowsPerBlock(t quant.Type, k int) int {
	if t == quant.Q8_0 {
		return 8
	}
	return rowsPerBlock(t, 1, k)
}

// idRowBlocks is the row blocks of mmv_id for m rows of t weights over k columns.
func idRowBlocks(t quant.Type, m, k int) int {
	rpb := idRowsPerBlock(t, k)
	return (m + rpb - 1) / rpb
}

// rowBlocks is the row blocks of a mat-vec kernel of nx activation rows for m rows of t
// weights over k columns (rowsPerBlock).
func rowBlocks(t quant.Type, nx, m, k int) int {
	rpb := rowsPerBlock(t, nx, k)
	return (m + rpb - 1) / rpb
}

// mv1SmemMax bounds the shared memory of a batch-1 kernel: the default limit, so that
// no attribute need be raised; a longer activation row is read from global memory.
const mv1SmemMax = 48 << 10

// mv1Stage is the static shared memory the batch-1 kernels of t weights stage them in
// (mv1lo.cuh: Q2_K and Q3_K four warps of two rows of 64 chunks, Q4_0, Q5_0, Q4_1 and
// Q5_1 of four), which the activation row's must leave room for.
func mv1Stage(t quant.Type) int {
	switch t {
	case quant.Q2_K, quant.Q3_K:
		return 4 * 2 * 64 * 16
	case quant.Q4_0, quant.Q5_0, quant.Q4_1, quant.Q5_1:
		return 4 * 4 * 64 * 16
	}
	return 0
}

// mv1Smem is the dynamic shared memory of a batch-1 product (mmv_*_1, mmv_id_*,
// mmv_multi) of t weights of k columns: the quantized activation row, which the mv1
// kernels (mv1Type) copy there; 0 for the other types or a row past mv1SmemMax less
// mv1Stage (the kernels then read the row from global memory).
// Reading it from global memory always (EMBER_CUDA_MV1_GLOBAL, session 25) was slower:
// 8B Q8_0 tg128 364.7 against 381.4, Q4_K_M 450.5 against 466.0 (session 26).
func mv1Smem(t quant.Type, k int) int {
	if mv1Type(t) {
		if s := actStride(partner(t), k); s <= mv1SmemMax-mv1Stage(t) {
			return s
		}
	}
	return 0
}

// mv1Type reports whether the batch-1 products of t weights (mmv_*_1, mmv_id_*) are mv1
// (mv1.cuh, mv1x.cuh, mv1lo.cuh): every type the kernels take (canMultiply) but F32.
func mv1Type(t quant.Type) bool { return t != quant.F32 && canMultiply(t) }

// F32WeightEnv names an environment variable: when 0, one activation row's product with
// an F32 weight runs on mmv_f32_1 instead of mmv_f32_1w, which loads its weights before
// the kernel before it has finished (the same bits; for timing).
const F32WeightEnv = "EMBER_CUDA_F32W"

// mmv runs the dot kernel of w's type over n quantized activation rows.
func (b *Backend) mmv(d, w *tensor, xq uint64, xstride, n int) {
	if xq == 0 {
		return
	}
	if b.mmq(d, w, xq, xstride, n) {
		return
	}
	if n == 1 && !b.mvsc.off && b.mvs(xq, w.cols, []*tensor{w}, []*tensor{d}) {
		return
	}
	if n == 1 && b.ffnFuse(d, w, xq) {
		return
	}
	nx, smem := 8, 0
	switch {
	case n <= 1:
		nx, smem = 1, mv1Smem(w.typ, w.cols)
	case n <= 2:
		nx = 2
	case n <= 4:
		nx = 4
	}
	name := b.denseName(mmvName(w.typ, nx))
	if nx == 1 && w.typ == quant.F32 && (w.weight || w.ofWeight) && !b.noF32W {
		name = "mmv_f32_1w" // its weights read before the wait: only a weight's may be
	}
	b.launch(name, rowBlocks(w.typ, nx, w.rows, w.cols), (n+nx-1)/nx, 128, smem, ptr(w), i64(w.stride), xq, i64(xstride),
		ptr(d), i64(d.cols), i64(w.rows), i64(w.cols), i64(n))
}

// MatMul implements backend.Ops. F32 weights read x in place unless dst overlaps it
// (then a copy, as for the other types' rounding).
func (b *Backend) MatMul(dst, w, x backend.Tensor) {
	d, wt, xt := want(dst, quant.F32), get(w), want(x, quant.F32)
	checkMatMul(d, wt, xt)
	if b.mfMatMul(d, wt, xt) || b.ltMatMul(d, wt, xt) {
		return
	}
	if wt.typ == quant.F32 && (d.ptr >= xt.ptr+uint64(xt.rows*xt.stride) || xt.ptr >= d.ptr+uint64(d.rows*d.stride)) {
		b.mmv(d, wt, xt.ptr, xt.stride, xt.rows)
		return
	}
	xq, stride := b.quantize(xt, partner(wt.typ))
	b.mmv(d, wt, xq, stride, xt.rows)
}

// MatMulShared implements backend.SharedMatMuler: x is rounded once per dot partner,
// before any projection writes its output (which may alias x).
func (b *Backend) MatMulShared(x backend.Tensor, projs []backend.Proj) {
	xt := want(x, quant.F32)
	b.mg.laid, b.mg.shared = 0, true
	defer func() { b.mg.laid, b.mg.shared = 0, false }() // mmg's laid-out rows serve only these projections
	if b.multi(xt, projs) || b.sharedRuns(xt, nil, projs) {
		return
	}
	// One row: two or three plain projections leading uniform runs (DeepSeek's latent
	// and rope key beside the per-head query projections) share one rounding.
	if xt.rows == 1 && len(projs) > 4 && !b.fuseOff() && (b.sharedRuns(xt, projs[:2], projs[2:]) || b.sharedRuns(xt, projs[:3], projs[3:])) {
		return
	}
	type q struct {
		ptr    uint64
		stride int
	}
	var done [4]struct {
		vt quant.Type
		q
	}
	jobs := b.ltJobs(xt, projs) // nil, or per projection its cuBLASLt job or nil
	nd := 0
	find := func(vt quant.Type) (q, bool) {
		for _, e := range done[:nd] {
			if e.vt == vt {
				return e.q, true
			}
		}
		return q{}, false
	}
	for _, p := range projs {
		d, wt := want(p.Dst, quant.F32), get(p.W)
		checkMatMul(d, wt, xt)
		vt := partner(wt.typ)
		if _, ok := find(vt); ok {
			continue
		}
		if nd == len(done) {
			panic("cuda: MatMulShared: more than 4 activation formats")
		}
		xq, stride := b.quantize(xt, vt)
		done[nd].vt, done[nd].q = vt, q{xq, stride}
		nd++
	}
	var xh uint64 // the f16 rows of lastVT's rounding for cuBLASLt and mmf (one scratch buffer)
	var lastVT quant.Type
	f16Rows := func(e q, vt quant.Type) uint64 {
		// f16 rows of the partner-rounded activations (cublaslt_matmul.go), made once
		// for consecutive projections of the same partner.
		if xh == 0 || vt != lastVT {
			xh, lastVT = b.ltAct(e.ptr, e.stride, vt, xt.cols, xt.rows), vt
		}
		return xh
	}
	for i := 0; i < len(projs); i++ {
		d, wt := get(projs[i].Dst), get(projs[i].W)
		vt := partner(wt.typ)
		e, _ := find(vt)
		var xq uint64 // the Q8_K rows: their norm may lay them out for mmg itself (mmgRun)
		if vt == quant.Q8_K {
			xq = e.ptr
		}
		if i+1 < len(projs) && partner(get(projs[i+1].W).typ) == vt &&
			b.mmgPair(xt, projs[i], projs[i+1], xq, e.stride, func() uint64 { return f16Rows(e, vt) }) {
			i++
			continue
		}
		if b.mfTakes(wt, xt.rows) {
			b.mmf(d, wt, f16Rows(e, vt), xt.rows)
			continue
		}
		if jobs != nil && jobs[i] != nil {
			// With the next projection on cuBLASLt too, over the same rounding: both in
			// one batched product where they allow it (ltpair.go).
			if b.lt.pairs && i+1 < len(projs) && jobs[i+1] != nil && partner(get(projs[i+1].W).typ) == vt &&
				b.ltRunPair(jobs[i], jobs[i+1], f16Rows(e, vt)) {
				i++
				continue
			}
			b.ltRun(jobs[i], f16Rows(e, vt))
			continue
		}
		b.mmv(d, wt, e.ptr, e.stride, xt.rows)
	}
}

// multi runs the projections of one activation row in a single launch (multiKernel)
// when there are at most three and one kernel takes their types.
func (b *Backend) multi(xt *tensor, projs []backend.Proj) bool {
	vt, ok := multiTakes(xt, projs)
	if !ok {
		return false
	}
	if xq, stride := b.quantize(xt, vt); xq != 0 {
		b.multiLaunch(xt, projs, xq, stride)
	}
	return true
}

// multiTakes reports whether mmv_multi takes projs of the one row xt, and their dot
// partner.
func multiTakes(xt *tensor, projs []backend.Proj) (quant.Type, bool) {
	if xt.rows != 1 || len(projs) < 2 || len(projs) > 3 {
		return 0, false
	}
	vt := partner(get(projs[0].W).typ)
	for _, p := range projs {
		d, wt := want(p.Dst, quant.F32), get(p.W)
		checkMatMul(d, wt, xt)
		if partner(wt.typ) != vt {
			return 0, false
		}
	}
	return vt, multiKernel(projs) != ""
}

// multiKernels is the mmv_multi kernel of each weight type one takes (Q6_K aside: it goes
// with Q4_K's kernel or Q5_K's).
var multiKernels = map[quant.Type]string{
	quant.Q4_K: "mmv_multi", quant.Q5_K: "mmv_multi_q5_k", quant.Q8_0: "mmv_multi_q8_0",
	quant.Q4_0: "mmv_multi_q4_0", quant.Q5_0: "mmv_multi_q4_0",
	quant.Q4_1: "mmv_multi_q4_1", quant.Q5_1: "mmv_multi_q4_1",
}

// multiKernel is the mmv_multi kernel for projections of one dot partner: mmv_multi for
// Q4_K and Q6_K weights, mmv_multi_q5_k for Q5_K and Q6_K, mmv_multi_q8_0 for Q8_0,
// mmv_multi_q4_0 for Q4_0 and Q5_0, mmv_multi_q4_1 for Q4_1 and Q5_1 (multiKernels); ""
// when no one kernel takes their types (Q4_K beside Q5_K, Q4_0 beside Q8_0, Q6_K beside
// any but Q4_K and Q5_K, or any other type). Q2_K and Q3_K have none: one launch for a
// Q2_K file's gate and up (a kernel of both types, then of each) was 1.7-3% slower on the
// H200 than two (session 50), its registers past the lone kernels' (80-96 against 72-80).
func multiKernel(projs []backend.Proj) string {
	kernel, q6 := "", false
	for _, p := range projs {
		t := get(p.W).typ
		if t == quant.Q6_K {
			q6 = true
			continue
		}
		k, ok := multiKernels[t]
		if !ok || kernel != "" && kernel != k {
			return ""
		}
		kernel = k
	}
	switch {
	case kernel == "":
		return "mmv_multi" // all Q6_K
	case q6 && kernel != "mmv_multi" && kernel != "mmv_multi_q5_k":
		return ""
	}
	return kernel
}

// multiLaunch queues mmv_multi for projs (multiTakes) from the quantized row xq.
func (b *Backend) multiLaunch(xt *tensor, projs []backend.Proj, xq uint64, stride int) {
	if !b.mvsc.off {
		var ws, ds []*tensor
		for _, p := range projs {
			ws, ds = append(ws, get(p.W)), append(ds, get(p.Dst))
		}
		if b.mvs(xq, xt.cols, ws, ds) {
			return
		}
	}
	args := []uint64{xq, i64(stride), i64(xt.cols)}
	blocks := 0
	for j := 0; j < 3; j++ {
		if j >= len(projs) {
			args = append(args, 0, 0, 0, 0, 0)
			continue
		}
		d, wt := get(projs[j].Dst), get(projs[j].W)
		args = append(args, ptr(wt), i64(wt.stride), ptr(d), i64(wt.rows), i64(int(wt.typ)))
		blocks += rowBlocks(wt.typ, 1, wt.rows, wt.cols)
	}
	b.launch(b.denseName(multiKernel(projs)), blocks, 1, 128, mv1Smem(get(projs[0].W).typ, xt.cols), args...)
}
