package cuda

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// cuBLASLt, loaded with dlopen so that nothing of CUDA is needed at build time. The
// types, enum values and struct layouts below and in lt.h are copied from cublasLt.h, cublas_api.h
// and library_types.h of CUDA 11.8 (cuBLAS 11.11.3); they are the same in CUDA 12 and
// 13 (the ABI of these calls is stable):
//   cublasStatus_t: int, CUBLAS_STATUS_SUCCESS = 0
//   cudaDataType: CUDA_R_32F = 0, CUDA_R_16F = 2
//   cublasComputeType_t: CUBLAS_COMPUTE_32F = 68
//   cublasOperation_t: CUBLAS_OP_T = 1
//   cublasLtMatmulDescAttributes_t: CUBLASLT_MATMUL_DESC_TRANSA = 3 (int32_t)
//   cublasLtMatrixLayoutAttribute_t: CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5 (int32_t),
//     CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6 (int64_t, elements)
//   cublasLtMatmulPreferenceAttributes_t: CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1
//     (uint64_t), CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_{A,B,C,D}_BYTES = 5, 6, 7, 8 (uint32_t)
//   cublasLtMatmulAlgo_t: uint64_t data[8]
//   cublasLtMatmulHeuristicResult_t: algo, size_t workspaceSize, status, float
//     wavesCount, int reserved[4]
#include "lt.h"

// em_lt_load dlopens path and resolves every symbol; NULL when the library or one of
// its symbols is missing (why in *err), which is not a failure of the backend.
static em_lt *em_lt_load(const char *path, const char **err) {
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) { *err = dlerror(); return 0; }
	void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!cu) { *err = dlerror(); return 0; }
	em_lt *lt = calloc(1, sizeof(em_lt));
	if (!lt) { *err = "out of memory"; return 0; }
	lt->lib = lib;
#define SYM(h, p, name) \
	*(void **)(&lt->p) = dlsym(h, name); \
	if (!lt->p) { *err = "missing symbol " name; free(lt); return 0; }
	SYM(cu, ctxGet, "cuCtxGetCurrent")
	SYM(cu, ctxSet, "cuCtxSetCurrent")
	SYM(lib, create, "cublasLtCreate")
	SYM(lib, destroy, "cublasLtDestroy")
	SYM(lib, descCreate, "cublasLtMatmulDescCreate")
	SYM(lib, descDestroy, "cublasLtMatmulDescDestroy")
	SYM(lib, descSet, "cublasLtMatmulDescSetAttribute")
	SYM(lib, layoutCreate, "cublasLtMatrixLayoutCreate")
	SYM(lib, layoutDestroy, "cublasLtMatrixLayoutDestroy")
	SYM(lib, layoutSet, "cublasLtMatrixLayoutSetAttribute")
	SYM(lib, prefCreate, "cublasLtMatmulPreferenceCreate")
	SYM(lib, prefDestroy, "cublasLtMatmulPreferenceDestroy")
	SYM(lib, prefSet, "cublasLtMatmulPreferenceSetAttribute")
	SYM(lib, heuristic, "cublasLtMatmulAlgoGetHeuristic")
	SYM(lib, matmul, "cublasLtMatmul")
#undef SYM
	return lt;
}

// The library stays loaded when a backend closes (dlclose of cuBLAS and its runtime
// while the process lives is not safe); only the struct is freed.
static void em_lt_free(em_lt *lt) { free(lt); }

// Each call below returns a cublasStatus_t, or -1 with the CUresult in *cu when ctx
// could not be made current, and names the cuBLASLt call that failed in *call.
static int em_lt_create(em_lt *lt, CUcontext ctx, CUresult *cu, const char **call) {
	*call = "cublasLtCreate";
	if ((*cu = em_lt_ctx(lt, ctx))) return -1;
	return lt->create(&lt->handle);
}

static int em_lt_destroy(em_lt *lt, CUcontext ctx, CUresult *cu, const char **call) {
	*call = "cublasLtDestroy";
	if (!lt->handle) return 0;
	if ((*cu = em_lt_ctx(lt, ctx))) return -1;
	int s = lt->destroy(lt->handle);
	lt->handle = 0;
	return s;
}

static void em_lt_plan_free(em_lt *lt, em_lt_plan *p) {
	if (!p) return;
	if (p->a) lt->layoutDestroy(p->a);
	if (p->b) lt->layoutDestroy(p->b);
	if (p->d) lt->layoutDestroy(p->d);
	if (p->desc) lt->descDestroy(p->desc);
	free(p);
}

// em_lt_plan_new describes D (m x n f32, column-major, ld ldd) = op(A) B where A is k x m
// f16 (ld lda) transposed and B k x n f16 (ld ldb), with f32 compute and scale, and asks
// the heuristic for the best algorithm for buffers of the given alignments within ws
// bytes of workspace, keeping up to want (at most EM_LT_CANDS) of its candidates, the
// first chosen. *out is NULL (status 0) when the heuristic has none. With batch >
// 1 the product is batched: item i's A and D lie sa and sd elements after item i-1's,
// and every item reads the same B (stride 0).
static int em_lt_plan_new(em_lt *lt, CUcontext ctx, uint64_t m, uint64_t n, uint64_t k, int64_t lda, int64_t ldb,
                          int64_t ldd, uint32_t ala, uint32_t alb, uint32_t ald, int32_t batch, int64_t sa,
                          int64_t sd, uint64_t ws, int want, em_lt_plan **out, CUresult *cu, const char **call) {
	*out = 0;
	*call = "cuCtxSetCurrent";
	if ((*cu = em_lt_ctx(lt, ctx))) return -1;
	em_lt_plan *p = calloc(1, sizeof(em_lt_plan));
	if (!p) { *call = "calloc"; return 3; }
	int s;
	int32_t trans = 1; // CUBLAS_OP_T
	*call = "cublasLtMatmulDescCreate";
	if ((s = lt->descCreate(&p->desc, 68, 0))) goto fail; // CUBLAS_COMPUTE_32F, CUDA_R_32F
	*call = "cublasLtMatmulDescSetAttribute(TRANSA)";
	if ((s = lt->descSet(p->desc, 3, &trans, sizeof(trans)))) goto fail;
	*call = "cublasLtMatrixLayoutCreate";
	if ((s = lt->layoutCreate(&p->a, 2, k, m, lda))) goto fail; // CUDA_R_16F
	if ((s = lt->layoutCreate(&p->b, 2, k, n, ldb))) goto fail;
	if ((s = lt->layoutCreate(&p->d, 0, m, n, ldd))) goto fail; // CUDA_R_32F
	if (batch > 1) {
		const int64_t sb = 0;
		*call = "cublasLtMatrixLayoutSetAttribute";
		if ((s = lt->layoutSet(p->a, 5, &batch, sizeof(batch)))) goto fail;
		if ((s = lt->layoutSet(p->b, 5, &batch, sizeof(batch)))) goto fail;
		if ((s = lt->layoutSet(p->d, 5, &batch, sizeof(batch)))) goto fail;
		if ((s = lt->layoutSet(p->a, 6, &sa, sizeof(sa)))) goto fail;
		if ((s = lt->layoutSet(p->b, 6, &sb, sizeof(sb)))) goto fail;
		if ((s = lt->layoutSet(p->d, 6, &sd, sizeof(sd)))) goto fail;
	}
	void *pref = 0;
	*call = "cublasLtMatmulPreferenceCreate";
	if ((s = lt->prefCreate(&pref))) goto fail;
	*call = "cublasLtMatmulPreferenceSetAttribute";
	s = lt->prefSet(pref, 1, &ws, sizeof(ws));
	if (!s) s = lt->prefSet(pref, 5, &ala, sizeof(ala));
	if (!s) s = lt->prefSet(pref, 6, &alb, sizeof(alb));
	if (!s) s = lt->prefSet(pref, 7, &ald, sizeof(ald));
	if (!s) s = lt->prefSet(pref, 8, &ald, sizeof(ald));
	em_lt_heur h[EM_LT_CANDS];
	memset(h, 0, sizeof(h));
	int found = 0;
	if (!s) {
		*call = "cublasLtMatmulAlgoGetHeuristic";
		if (want < 1 || want > EM_LT_CANDS) want = EM_LT_CANDS;
		s = lt->heuristic(lt->handle, p->desc, p->a, p->b, p->d, p->d, pref, want, h, &found);
	}
	lt->prefDestroy(pref);
	if (s == 15) s = found = 0; // CUBLAS_STATUS_NOT_SUPPORTED: no algorithm for this shape
	if (s) goto fail;
	for (int i = 0; i < found && i < EM_LT_CANDS; i++)
		if (h[i].state == 0 && h[i].workspace <= ws) p->cand[p->ncand++] = h[i];
	if (p->ncand == 0) {
		em_lt_plan_free(lt, p);
		return 0;
	}
	p->algo = p->cand[0].algo;
	p->workspace = p->cand[0].workspace;
	*out = p;
	return 0;
fail:
	em_lt_plan_free(lt, p);
	return s;
}

// em_lt_matmul queues D = A^T B (alpha 1, beta 0; C is D, not read) on stream s: the
// legacy default stream (0), the one every launch of the backend goes to, or a stream
// being captured into a graph.
static int em_lt_matmul(em_lt *lt, CUcontext ctx, em_lt_plan *p, uint64_t a, uint64_t b, uint64_t d, uint64_t ws,
                        void *s, CUresult *cu, const char **call) {
	*call = "cuCtxSetCurrent";
	if ((*cu = em_lt_ctx(lt, ctx))) return -1;
	*call = "cublasLtMatmul";
	float alpha = 1, beta = 0;
	return lt->matmul(lt->handle, p->desc, &alpha, (const void *)a, p->a, (const void *)b, p->b, &beta, (const void *)d,
	                  p->d, (void *)d, p->d, &p->algo, (void *)ws, p->workspace, s);
}
*/
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
	"unsafe"
)

// Environment variables of the cuBLASLt path (cublaslt_matmul.go).
const (
	// CublasLtEnv is a full path to libcublasLt, tried before the usual names.
	CublasLtEnv = "EMBER_CUBLASLT"
	// NoCublasEnv turns the cuBLASLt path off (every product on our kernels).
	NoCublasEnv = "EMBER_CUDA_NO_CUBLAS"
	// CublasMinRowsEnv overrides the activation rows from which products go to
	// cuBLASLt (Options.CublasMinRows).
	CublasMinRowsEnv = "EMBER_CUDA_CUBLAS_MIN_ROWS"
)

// ltCandidates are the libraries tried in order: $EMBER_CUBLASLT, then the sonames of
// CUDA 13, 12 and 11 and the unversioned name in the loader's search path, then the
// same names in the toolkit's usual directories.
func ltCandidates() []string {
	names := []string{"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11", "libcublasLt.so"}
	var out []string
	if p := os.Getenv(CublasLtEnv); p != "" {
		out = append(out, p)
	}
	out = append(out, names...)
	for _, dir := range []string{"/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"} {
		for _, n := range names {
			out = append(out, filepath.Join(dir, n))
		}
	}
	return out
}

// ltLib is a loaded cuBLASLt (no handle yet) and the path it came from.
type ltLib struct {
	c    *C.em_lt
	path string
}

// loadLt opens the first cuBLASLt of ltCandidates that has every symbol we call; the
// error says what was tried (it is not a failure: the caller runs without cuBLASLt).
func loadLt() (*ltLib, error) {
	var last string
	for _, p := range ltCandidates() {
		cs := C.CString(p)
		var msg *C.char
		lt := C.em_lt_load(cs, &msg)
		C.free(unsafe.Pointer(cs))
		if lt != nil {
			return &ltLib{c: lt, path: p}, nil
		}
		last = C.GoString(msg)
	}
	return nil, fmt.Errorf("cuda: no usable libcublasLt (last: %s)", last)
}

// ltErr names a failed cuBLASLt (or context) call and its status.
func ltErr(call *C.char, s C.int, cu C.CUresult) error {
	if s == -1 {
		return cuErr("cuCtxSetCurrent", "", cu)
	}
	return fmt.Errorf("cuda: %s: %s (%d)", C.GoString(call), ltStatusName(int(s)), int(s))
}

// ltStatusName is the name of a cublasStatus_t (cublas_api.h).
func ltStatusName(s int) string {
	switch s {
	case 0:
		return "CUBLAS_STATUS_SUCCESS"
	case 1:
		return "CUBLAS_STATUS_NOT_INITIALIZED"
	case 3:
		return "CUBLAS_STATUS_ALLOC_FAILED"
	case 7:
		return "CUBLAS_STATUS_INVALID_VALUE"
	case 8:
		return "CUBLAS_STATUS_ARCH_MISMATCH"
	case 11:
		return "CUBLAS_STATUS_MAPPING_ERROR"
	case 13:
		return "CUBLAS_STATUS_EXECUTION_FAILED"
	case 14:
		return "CUBLAS_STATUS_INTERNAL_ERROR"
	case 15:
		return "CUBLAS_STATUS_NOT_SUPPORTED"
	case 16:
		return "CUBLAS_STATUS_LICENSE_ERROR"
	}
	return "CUBLAS_STATUS_UNKNOWN"
}

// create makes the library's handle in ctx.
func (l *ltLib) create(ctx C.CUcontext) error {
	var cu C.CUresult
	var call *C.char
	if s := C.em_lt_create(l.c, ctx, &cu, &call); s != 0 {
		return ltErr(call, s, cu)
	}
	return nil
}

// destroy destroys the handle (if any) and frees the struct; l is unusable after.
func (l *ltLib) destroy(ctx C.CUcontext) error {
	var cu C.CUresult
	var call *C.char
	s := C.em_lt_destroy(l.c, ctx, &cu, &call)
	C.em_lt_free(l.c)
	l.c = nil
	if s != 0 {
		return ltErr(call, s, cu)
	}
	return nil
}

// ltKey is a product shape and the alignment (bytes, at most 256) of its buffers: the
// inputs of the heuristic.
type ltKey struct {
	m, n, k, lda, ldb, ldd int
	alA, alB, alD          uint32
	// batch > 1: that many products, item i's A and D sa and sd elements after item
	// i-1's, all reading the same B (ltpair.go); 0 or 1: one product.
	batch  int
	sa, sd int64
}

// ltPlan is the algorithm chosen for one ltKey; c is nil when the heuristic had none.
type ltPlan struct {
	c     *C.em_lt_plan
	key   ltKey
	tuned bool // its candidates were timed (lttune.go)
}

// plan asks the heuristic for an algorithm for key within ws bytes of workspace, keeping
// up to want candidates (lttune.go times them; the first is the heuristic's choice).
func (l *ltLib) plan(ctx C.CUcontext, key ltKey, ws, want int) (*ltPlan, error) {
	var cu C.CUresult
	var call *C.char
	p := &ltPlan{key: key}
	if s := C.em_lt_plan_new(l.c, ctx, C.uint64_t(key.m), C.uint64_t(key.n), C.uint64_t(key.k), C.int64_t(key.lda),
		C.int64_t(key.ldb), C.int64_t(key.ldd), C.uint32_t(key.alA), C.uint32_t(key.alB), C.uint32_t(key.alD),
		C.int32_t(key.batch), C.int64_t(key.sa), C.int64_t(key.sd), C.uint64_t(ws), C.int(want), &p.c, &cu,
		&call); s != 0 {
		return nil, fmt.Errorf("%w (product %dx%dx%d)", ltErr(call, s, cu), key.m, key.n, key.k)
	}
	return p, nil
}

func (l *ltLib) freePlan(p *ltPlan) {
	if p.c != nil {
		C.em_lt_plan_free(l.c, p.c)
		p.c = nil
	}
}

// matmul queues D = A^T B for plan p on stream (device addresses; nil: the default
// stream).
func (l *ltLib) matmul(ctx C.CUcontext, p *ltPlan, a, b, d, ws uint64, stream unsafe.Pointer) error {
	var cu C.CUresult
	var call *C.char
	if s := C.em_lt_matmul(l.c, ctx, p.c, C.uint64_t(a), C.uint64_t(b), C.uint64_t(d), C.uint64_t(ws), stream, &cu,
		&call); s != 0 {
		return ltErr(call, s, cu)
	}
	return nil
}

// workspace is the bytes of the plan's workspace.
func (p *ltPlan) workspace() int { return int(p.c.workspace) }
