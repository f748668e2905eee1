// lt.h: the cuBLASLt types shared by cublaslt.go's C code (which loads the library and
// plans products) and lttune.go's (which times a plan's candidate algorithms). cgo
// compiles each Go file's C preamble apart, so what both use is declared here. The
// types, enum values and struct layouts come from cublasLt.h (cublaslt.go lists them).
#pragma once
#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef void *CUcontext;
typedef struct { uint64_t data[8]; } em_lt_algo;
typedef struct {
	em_lt_algo algo;
	size_t workspace;
	int state;
	float waves;
	int reserved[4];
} em_lt_heur;

// em_lt is one backend's cuBLASLt: the library's entry points and a handle.
typedef struct {
	void *lib;
	CUresult (*ctxGet)(CUcontext *);
	CUresult (*ctxSet)(CUcontext);
	int (*create)(void **);
	int (*destroy)(void *);
	int (*descCreate)(void **, int, int);
	int (*descDestroy)(void *);
	int (*descSet)(void *, int, const void *, size_t);
	int (*layoutCreate)(void **, int, uint64_t, uint64_t, int64_t);
	int (*layoutDestroy)(void *);
	int (*layoutSet)(void *, int, const void *, size_t);
	int (*prefCreate)(void **);
	int (*prefDestroy)(void *);
	int (*prefSet)(void *, int, const void *, size_t);
	int (*heuristic)(void *, void *, void *, void *, void *, void *, void *, int, em_lt_heur *, int *);
	int (*matmul)(void *, void *, const void *, const void *, void *, const void *, void *, const void *,
	              const void *, void *, void *, void *, const em_lt_algo *, void *, size_t, void *);
	void *handle;
} em_lt;

// EM_LT_CANDS is the most algorithms the heuristic is asked for (the first is used
// unless a plan is tuned: lttune.go).
#define EM_LT_CANDS 8

// em_lt_plan is one product shape's descriptors and the algorithm chosen for it, with
// the heuristic's candidates in its order (ncand of them, each within the workspace).
typedef struct {
	void *desc, *a, *b, *d;
	em_lt_algo algo;
	size_t workspace;
	em_lt_heur cand[EM_LT_CANDS];
	int ncand;
} em_lt_plan;

// em_lt_ctx makes ctx current on the calling thread (goroutines move between threads).
static inline CUresult em_lt_ctx(em_lt *lt, CUcontext ctx) {
	CUcontext cur = 0;
	CUresult r = lt->ctxGet(&cur);
	if (r || cur == ctx) return r;
	return lt->ctxSet(ctx);
}
