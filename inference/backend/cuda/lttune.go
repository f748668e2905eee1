package cuda

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include "lt.h"

typedef void *CUevent;

// em_lt_tune times plan p's candidates on the legacy default stream with the product's
// own buffers (reps runs each, after one to warm up, between two events) and makes the
// fastest the plan's algorithm: ms[i] is candidate i's time a run (-1 where it needs
// more than wsSize bytes of workspace or its call failed), *best its index (-1: none
// ran). 0, or the CUresult of the call named in *call.
static CUresult em_lt_tune(em_lt *lt, CUcontext ctx, em_lt_plan *p, uint64_t a, uint64_t b, uint64_t d, uint64_t ws,
                           uint64_t wsSize, int reps, float *ms, int *best, const char **call) {
	*best = -1;
	*call = "dlopen(libcuda.so.1)";
	void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!cu) return 1;
	CUresult (*evCreate)(CUevent *, unsigned) = (CUresult(*)(CUevent *, unsigned))dlsym(cu, "cuEventCreate");
	CUresult (*evRecord)(CUevent, void *) = (CUresult(*)(CUevent, void *))dlsym(cu, "cuEventRecord");
	CUresult (*evSync)(CUevent) = (CUresult(*)(CUevent))dlsym(cu, "cuEventSynchronize");
	CUresult (*evElapsed)(float *, CUevent, CUevent) = (CUresult(*)(float *, CUevent, CUevent))dlsym(cu, "cuEventElapsedTime");
	CUresult (*evDestroy)(CUevent) = (CUresult(*)(CUevent))dlsym(cu, "cuEventDestroy_v2");
	dlclose(cu);
	*call = "dlsym(cuEvent...)";
	if (!evCreate || !evRecord || !evSync || !evElapsed || !evDestroy) return 1;
	CUresult r;
	*call = "cuCtxSetCurrent";
	if ((r = em_lt_ctx(lt, ctx))) return r;
	CUevent e0 = 0, e1 = 0;
	*call = "cuEventCreate";
	if ((r = evCreate(&e0, 0)) || (r = evCreate(&e1, 0))) goto out;
	float alpha = 1, beta = 0, least = 0;
	for (int i = 0; i < p->ncand; i++) {
		const em_lt_heur *h = &p->cand[i];
		ms[i] = -1;
		if (h->workspace > wsSize) continue;
		int s = 0;
		for (int j = 0; j <= reps && !s; j++) {
			if (j == 1) {
				*call = "cuEventRecord";
				if ((r = evRecord(e0, 0))) goto out;
			}
			s = lt->matmul(lt->handle, p->desc, &alpha, (const void *)a, p->a, (const void *)b, p->b, &beta,
			               (const void *)d, p->d, (void *)d, p->d, &h->algo, (void *)ws, h->workspace, 0);
		}
		if (s) continue; // this algorithm declined the call: the others are still timed
		*call = "cuEventRecord";
		if ((r = evRecord(e1, 0))) goto out;
		*call = "cuEventSynchronize";
		if ((r = evSync(e1))) goto out;
		float t = 0;
		*call = "cuEventElapsedTime";
		if ((r = evElapsed(&t, e0, e1))) goto out;
		ms[i] = t / reps;
		if (*best < 0 || ms[i] < least) *best = i, least = ms[i];
	}
	if (*best >= 0) {
		p->algo = p->cand[*best].algo;
		p->workspace = p->cand[*best].workspace;
	}
out:
	if (e0) evDestroy(e0);
	if (e1) evDestroy(e1);
	return r;
}
*/
import "C"

import (
	"fmt"
	"os"
)

// Tuning cuBLASLt's algorithm choice.
//
// cuBLASLt's heuristic picks an algorithm from the shape alone; for the skinny products
// of batched decode (64 activation rows against 14336x4096 f16 copies) it chose tiles
// that leave a sixth of an H200's SMs idle (gate and up: 112 CTAs on 132 SMs, session
// 15's profile). With $EMBER_CUDA_LT_TUNE set, a plan keeps the heuristic's first
// ltTuneCands candidates, and at its first product they are timed on that product's own
// buffers (the queue flushed first, so everything before it has run and the output it
// writes is the product's, which the real call then overwrites) and the fastest kept.
// Once a plan is tuned its algorithm is fixed, so repeated products give the same bits;
// two processes may choose differently, so results can differ in their last bits
// between runs (f32 sums in another order), which is why it is off by default.
//
// Measured in session 16 (NOTES.md): it picks faster candidates for the down product
// (35.0 against 36.9 us on an H200) but costs more than it gains in serving, where every
// new row count is a new plan tuned at its first product; so it stays off.

// LtTuneEnv names an environment variable: when set, each cuBLASLt plan's candidate
// algorithms are timed at its first product and the fastest is kept.
const LtTuneEnv = "EMBER_CUDA_LT_TUNE"

const (
	ltTuneCands = C.EM_LT_CANDS // candidates kept and timed
	ltTuneReps  = 5             // timed runs of each
)

// ltTune times plan p's candidates on the product D = A^T x (device addresses) with the
// backend's workspace and keeps the fastest; it returns that workspace (0 when there
// is nothing to time: one candidate, or no memory for the workspace). A plan is tuned
// once, also when it has one candidate or the timing fails (the failure is recorded).
func (b *Backend) ltTune(p *ltPlan, a, x, d uint64) uint64 {
	p.tuned = true
	if p.c == nil || p.c.ncand < 2 {
		return 0
	}
	ws := b.scratchFor(&b.lt.ws, ltWorkspace)
	if ws == 0 {
		return 0
	}
	b.flush()
	if b.err != nil {
		return ws
	}
	var ms [ltTuneCands]C.float
	var best C.int
	var call *C.char
	if r := C.em_lt_tune(b.lt.lib.c, b.h.ctx, p.c, C.uint64_t(a), C.uint64_t(x), C.uint64_t(d), C.uint64_t(ws),
		C.uint64_t(ltWorkspace), ltTuneReps, &ms[0], &best, &call); r != 0 {
		b.fail(fmt.Errorf("%w (tuning a %dx%dx%d product)", cuErr(C.GoString(call), "", r), p.key.m, p.key.n, p.key.k))
		return ws
	}
	b.st.ltTuned++
	if best > 0 && ms[0] > 0 {
		b.st.ltRetuned++
		b.st.ltSavedUs += 1e3 * float64(ms[0]-ms[best])
	}
	if b.st.on {
		fmt.Fprintf(os.Stderr, "cuda: tuned %dx%dx%d (batch %d): candidate %d of %d, %.1f us against %.1f for the first\n",
			p.key.m, p.key.n, p.key.k, max(1, p.key.batch), int(best), int(p.c.ncand), 1e3*float64(ms[max(best, 0)]),
			1e3*float64(ms[0]))
	}
	return ws
}
