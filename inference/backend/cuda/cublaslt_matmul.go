package cuda

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"ember/inference/backend"
	"ember/inference/quant"
)

// Large products on cuBLASLt.
//
// At many activation rows (prefill) a product is compute-bound, and our int8
// tensor-core kernel (mmq) is instruction-bound at ~170 TOP/s on an H200, while an f16
// GEMM of cuBLASLt runs several times faster. So from ltMinRows rows (256 unless
// Options.CublasMinRows or $EMBER_CUDA_CUBLAS_MIN_ROWS say otherwise) a product whose
// weight type dequant.cu takes goes to cuBLASLt, when the library is present:
//
//  1. the weight rows are dequantized to an f16 scratch copy (kernels/cuda/dequant.cu:
//     each value as quant.Dequantize computes it in f32, rounded to f16), at most
//     ltChunkBytes at a time (the 128,256-row lm_head would take 1 GB), so a large
//     matrix is done in chunks of rows, each a product of its own; F16 weights are read
//     in place;
//  2. the activation rows are rounded as the reference rounds them for the weight type
//     (its dot partner: Q8_K, Q8_0 or Q8_1 blocks, as for our kernels) and each value
//     d*q is then written in f16 (act_f16; F16 weights take f16 activations directly);
//  3. cublasLtMatmul with f32 accumulation and scale writes dst (f32, its row stride).
//
// The result is the reference's up to f16's rounding of the weights and of the rounded
// activations (2^-11 relative) and cuBLAS's f32 summation order. Rounding the activations
// to f16 alone (as llama.cpp's cuBLAS path does) is more precise but not what the
// reference computes: on the llama.cpp goldens it moved prompt logits past their bounds
// (NMSE up to 1e-1 on the small random models, which amplify such differences). f16
// holds magnitudes up to 65504, far beyond the weights' and activations' values.
//
// A cuBLASLt call is queued with the kernels (ltgraph.go): a batch launched directly
// calls it between its kernels on the same stream (the legacy default stream, which
// orders it after the kernels before it and before those after), and a batch seen
// again becomes one graph with the call a child graph captured from a stream, full
// edges on both sides. The backend's context is the device's primary context, the one
// the CUDA runtime under cuBLASLt uses, so cuBLASLt takes our cuMemAlloc addresses.

const (
	// ltDefaultMinRows is the default activation rows from which products go to
	// cuBLASLt.
	ltDefaultMinRows = 256
	// ltWorkspace is the workspace the heuristic may choose algorithms for (allocated
	// once, at the first product).
	ltWorkspace = 32 << 20
	// ltChunkBytes caps the f16 copy of a weight matrix; larger ones are done in chunks
	// of rows.
	ltChunkBytes = 256 << 20
	// ltMaxPlans bounds the plans kept (a few hundred bytes of host memory each).
	ltMaxPlans = 4096
)

// ltState is a backend's cuBLASLt: nil lib when absent or turned off (off says why).
type ltState struct {
	lib       *ltLib
	off       string
	minRows   int
	chunkRows int // rows per chunk of the f16 weight copy; 0: from ltChunkBytes
	plans     map[ltKey]*ltPlan
	ws        scratch // the workspace
	wf16      scratch // the f16 weight rows of the current chunk
	xf16      scratch // the activation rows in f16 (ltAct)
	products  int     // products done on cuBLASLt (for tests)
	pairs     bool    // unless $EMBER_CUDA_LT_NO_PAIRS: two projections of one shape as one batched product (ltpair.go)
	paired    int     // products done in pairs (for tests)
	tune      bool    // $EMBER_CUDA_LT_TUNE: each plan's candidates timed at its first product (lttune.go)
}

// openLt loads cuBLASLt and makes its handle; its absence (or a failure to start it) is
// recorded in b.lt.off and the backend runs without it.
func (b *Backend) openLt(opt Options) {
	b.lt.minRows = ltDefaultMinRows
	b.lt.pairs = os.Getenv(LtNoPairsEnv) == ""
	b.lt.tune = os.Getenv(LtTuneEnv) != ""
	if opt.CublasMinRows > 0 {
		b.lt.minRows = opt.CublasMinRows
	}
	if v := os.Getenv(CublasMinRowsEnv); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			b.lt.minRows = n
		}
	}
	if opt.NoCublas || os.Getenv(NoCublasEnv) != "" {
		b.lt.off = "turned off (" + NoCublasEnv + " or Options.NoCublas)"
		return
	}
	lib, err := loadLt()
	if err != nil {
		b.lt.off = err.Error()
		return
	}
	if err := lib.create(b.h.ctx); err != nil {
		b.lt.off = fmt.Sprintf("%s: %v", lib.path, err)
		lib.destroy(b.h.ctx) //nolint:errcheck // no handle was made
		return
	}
	b.lt.lib = lib
	b.lt.plans = map[ltKey]*ltPlan{}
}

// closeLt frees the plans and destroys the handle (the device memory is among
// b.scratches).
func (b *Backend) closeLt() error {
	l := b.lt.lib
	if l == nil {
		return nil
	}
	for _, p := range b.lt.plans {
		l.freePlan(p)
	}
	b.lt.plans, b.lt.lib = nil, nil
	if err := l.destroy(b.h.ctx); err != nil {
		return fmt.Errorf("cuda: closing cuBLASLt %s: %w", l.path, err)
	}
	return nil
}

// ltTakes reports whether the product of w with n activation rows goes to cuBLASLt
// (before the heuristic is asked: ltJobFor may still decline): from ltMinRows rows, or
// from f16MinRows rows for a large weight with an f16 copy (f16copy.go; asked for here,
// so made at a weight's first such product, or its first prefill product). F32 weights
// stay on our kernels, which multiply them in f32 as the reference does.
func (b *Backend) ltTakes(w *tensor, n int) bool {
	if b.lt.lib == nil || n < b.ltLeast() || w.cols%8 != 0 {
		return false
	}
	if w.typ == quant.F16 {
		return w.stride%16 == 0
	}
	if !dequantTakes(w.typ) {
		return false
	}
	if n >= b.lt.minRows {
		b.f16Copy(w) // saves this and every later product's dequantization
		return true
	}
	return b.f16Takes(w, n)
}

// ltLeast is the fewest activation rows a product on cuBLASLt can have.
func (b *Backend) ltLeast() int {
	if b.f16c.off {
		return b.lt.minRows
	}
	return min(b.lt.minRows, b.f16c.minRows)
}

// dequantTakes reports whether dequant.cu makes f16 rows of type t.
func dequantTakes(t quant.Type) bool {
	switch t {
	case quant.BF16, quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0, quant.Q2_K, quant.Q3_K,
		quant.Q4_K, quant.Q5_K, quant.Q6_K:
		return true
	}
	return false
}

// ltJob is one product planned on cuBLASLt: chunks of weight rows, each with its plan.
type ltJob struct {
	d, w   *tensor
	n      int
	rows   int       // weight rows per chunk (the last may have fewer)
	plans  []*ltPlan // per chunk
	wsSize int       // the largest workspace of the plans
}

// align is the alignment of address p in bytes, at most 256.
func align(p uint64) uint32 {
	a := uint32(256)
	for a > 1 && p%uint64(a) != 0 {
		a /= 2
	}
	return a
}

// ltPlanFor returns the cached plan of key, asking the heuristic the first time; a
// failure of the heuristic fails the backend when fatal, else is kept as a plan with no
// algorithm (the caller takes another path, now and later).
func (b *Backend) ltPlanFor(key ltKey, fatal bool) *ltPlan {
	if p, ok := b.lt.plans[key]; ok {
		return p
	}
	if len(b.lt.plans) >= ltMaxPlans { // batch sizes vary in serving: start over
		for _, p := range b.lt.plans {
			b.lt.lib.freePlan(p)
		}
		clear(b.lt.plans)
	}
	want := 1
	if b.lt.tune {
		want = ltTuneCands
	}
	p, err := b.lt.lib.plan(b.h.ctx, key, ltWorkspace, want)
	if err != nil && fatal {
		b.fail(err)
		return nil
	}
	if err != nil {
		p = &ltPlan{key: key}
	}
	b.lt.plans[key] = p
	return p
}

// ltJobFor plans the product d = w x^T of n rows (x as f16 rows of k = w.cols values,
// stride align16(2k) bytes, in a scratch buffer: 256-byte aligned). nil when the
// heuristic has no algorithm for one of its chunks (the caller takes our kernels).
func (b *Backend) ltJobFor(d, w *tensor, n int) *ltJob {
	if d.stride%4 != 0 {
		return nil
	}
	k := w.cols
	rows := w.rows
	if w.typ != quant.F16 && w.f16 == 0 {
		rows = max(128, (ltChunkBytes/(2*k))&^127)
		if b.lt.chunkRows > 0 {
			rows = b.lt.chunkRows
		}
	}
	j := &ltJob{d: d, w: w, n: n, rows: min(rows, w.rows)}
	for r0 := 0; r0 < w.rows; r0 += j.rows {
		m := min(j.rows, w.rows-r0)
		key := ltKey{m: m, n: n, k: k, lda: k, ldb: actStride(quant.F16, k) / 2, ldd: d.stride / 4, alA: 256, alB: 256,
			alD: align(d.ptr + uint64(4*r0))}
		switch {
		case w.typ == quant.F16:
			key.lda, key.alA = w.stride/2, align(w.ptr+uint64(r0*w.stride))
		case w.f16 != 0:
			key.alA = align(w.f16 + uint64(2*r0*k))
		}
		p := b.ltPlanFor(key, true)
		if p == nil || p.c == nil {
			return nil
		}
		j.plans = append(j.plans, p)
		j.wsSize = max(j.wsSize, p.workspace())
	}
	return j
}

// ltRun runs job j on activation rows xh (f16, from quantize(x, F16)): per chunk, the
// weight rows' dequantization and the product are queued (ltgraph.go); when profiling,
// the queue is flushed and cublasLtMatmul called and timed.
func (b *Backend) ltRun(j *ltJob, xh uint64) {
	if xh == 0 || b.err != nil {
		return
	}
	d, w, k := j.d, j.w, j.w.cols
	var wf uint64
	if w.typ != quant.F16 && w.f16 == 0 {
		if wf = b.scratchFor(&b.lt.wf16, 2*j.rows*k); wf == 0 {
			return
		}
	}
	t0 := time.Now()
	for c, p := range j.plans {
		r0 := c * j.rows
		m := min(j.rows, w.rows-r0)
		a := w.ptr + uint64(r0*w.stride)
		switch {
		case w.f16 != 0:
			a = w.f16 + uint64(2*r0*k)
		case w.typ != quant.F16:
			b.launch("dequant_f16_"+suffix[w.typ], blocks(m*k/8), 1, 256, 0, a, i64(w.stride), wf, i64(k), i64(m))
			a = wf
		}
		if !b.ltIssue(p, a, xh, d.ptr+uint64(4*r0), func() string {
			return fmt.Sprintf("weights %v %dx%d, rows %d..%d, %d activation rows", w.typ, w.rows, k, r0, r0+m, j.n)
		}) {
			return
		}
	}
	b.lt.products++
	if b.prof != nil {
		b.ltProfiled(t0, fmt.Sprintf("cublasLt %v %dx%d, %d rows", w.typ, w.rows, k, j.n))
	}
}

// ltIssue queues the product D = A^T x of plan p (ltgraph.go), or, when profiling,
// flushes the queue and calls it at once, with the backend's workspace when the plan's
// algorithm (as tuned, lttune.go) takes one; false when that call failed (recorded, with
// what the product was). The workspace is asked for here, after any tuning, not where
// the job was made: another job of the same shape may tune the plan in between and
// leave it an algorithm with a workspace.
func (b *Backend) ltIssue(p *ltPlan, a, x, d uint64, what func() string) bool {
	var ws uint64
	if b.lt.tune && !p.tuned {
		if ws = b.ltTune(p, a, x, d); b.err != nil {
			return false
		}
	}
	if ws == 0 && p.workspace() > 0 {
		if ws = b.scratchFor(&b.lt.ws, ltWorkspace); ws == 0 {
			return false
		}
	}
	if b.prof == nil {
		b.queueLt(ltCall{plan: p, a: a, b: x, d: d, ws: ws})
		return true
	}
	b.flush()
	if b.err != nil {
		return false
	}
	if err := b.lt.lib.matmul(b.h.ctx, p, a, x, d, ws, nil); err != nil {
		b.fail(fmt.Errorf("%w (%s)", err, what()))
		return false
	}
	b.last = "cublasLtMatmul"
	return true
}

// ltProfiled (when profiling: b.prof set) waits for the products issued since t0 and
// records their time as name's.
func (b *Backend) ltProfiled(t0 time.Time, name string) {
	if r := b.h.sync(); r != 0 {
		b.fail(fmt.Errorf("%w (after cublasLtMatmul)", cuErr("cuCtxSynchronize", "", r)))
	}
	b.prof.add(name, time.Since(t0))
}

// ltMatMul runs d = w x^T on cuBLASLt when it takes the product; false (having done
// nothing) when it does not.
func (b *Backend) ltMatMul(d, w, x *tensor) bool {
	if !b.ltTakes(w, x.rows) {
		return false
	}
	j := b.ltJobFor(d, w, x.rows)
	if j == nil {
		return false
	}
	vt := partner(w.typ)
	if !b.ltReserve(j, vt) {
		return false
	}
	xq, xs := b.quantize(x, vt)
	b.ltRun(j, b.ltAct(xq, xs, vt, x.cols, x.rows))
	return true
}

// ltReserve allocates, before anything of job j is queued, the scratch its run takes:
// the workspace, the f16 weight chunk and (for activations rounded to vt other than
// F16) the f16 activation rows. When the GPU cannot hold one it reports false, having
// recorded no failure: the product then runs on our kernels, which need none of it.
func (b *Backend) ltReserve(j *ltJob, vt quant.Type) bool {
	k := j.w.cols
	if j.wsSize > 0 && b.tryScratch(&b.lt.ws, ltWorkspace) == 0 {
		return false
	}
	if j.w.typ != quant.F16 && j.w.f16 == 0 && b.tryScratch(&b.lt.wf16, 2*j.rows*k) == 0 {
		return false
	}
	return vt == quant.F16 || b.tryScratch(&b.lt.xf16, j.n*actStride(quant.F16, k)) != 0
}

// tryScratch is scratchFor without the failure: 0 when the GPU cannot hold n bytes (it
// first asks for room to grow, then for n alone).
func (b *Backend) tryScratch(s *scratch, n int) uint64 {
	if s.size >= n {
		return s.ptr
	}
	for _, m := range []int{align16(max(n, 2*s.size)), align16(n)} {
		if p, err := b.allocScratch(s, m); err == nil {
			return p
		}
	}
	return 0
}

// ltAct returns the activation rows xq (n rows of k values rounded to vt, the weights'
// dot partner, xs bytes apart) as f16 rows for cuBLASLt, actStride(F16, k) bytes apart:
// xq itself when vt is F16, else act_f16's rewrite of each value d*q into a scratch
// buffer. 0 when there is nothing to run (an allocation failure is recorded).
func (b *Backend) ltAct(xq uint64, xs int, vt quant.Type, k, n int) uint64 {
	if xq == 0 || vt == quant.F16 {
		return xq
	}
	kind := 0 // Q8_0, Q8_1
	switch vt {
	case quant.Q8_K:
		kind = 1
	case quant.BF16:
		kind = 2
	}
	stride := actStride(quant.F16, k)
	out := b.scratchFor(&b.lt.xf16, n*stride)
	if out == 0 {
		return 0
	}
	if kind == 1 && b.fuseHalf(xq, xs, k, n, out, stride) {
		return out
	}
	for r0 := 0; r0 < n; r0 += maxGridY {
		rows := min(maxGridY, n-r0)
		b.launch("act_f16", (k/8+255)/256, rows, 256, 0, out+uint64(r0*stride), i64(stride), xq+uint64(r0*xs),
			i64(xs), i64(k), i64(kind))
	}
	return out
}

// ltJobs plans the projections of MatMulShared that go to cuBLASLt: nil when none can,
// else one entry per projection (nil for those on our kernels).
func (b *Backend) ltJobs(xt *tensor, projs []backend.Proj) []*ltJob {
	if b.lt.lib == nil || xt.rows < b.ltLeast() {
		return nil
	}
	var jobs []*ltJob
	for i, p := range projs {
		d, wt := want(p.Dst, quant.F32), get(p.W)
		checkMatMul(d, wt, xt)
		if b.mfTakes(wt, xt.rows) || !b.ltTakes(wt, xt.rows) {
			continue
		}
		if j := b.ltJobFor(d, wt, xt.rows); j != nil && b.ltReserve(j, partner(wt.typ)) {
			if jobs == nil {
				jobs = make([]*ltJob, len(projs))
			}
			jobs[i] = j
		}
	}
	return jobs
}

// CublasLibrary is the path of the libcublasLt the backend loaded for large products, or
// "" when it runs them all on its own kernels (no library, or turned off).
func (b *Backend) CublasLibrary() string {
	if b.lt.lib == nil {
		return ""
	}
	return b.lt.lib.path
}
