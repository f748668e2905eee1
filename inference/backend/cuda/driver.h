// driver.h: driver.go's C code: the few CUDA driver API types Ember uses, the entry
// points loaded from libcuda.so.1 with dlopen (em_load), and the small wrappers that
// driver.go calls. It defines what launch.h declares, so only driver.go includes it
// (cgo compiles each Go file's preamble apart).
#pragma once
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// The few CUDA driver API types we use, declared here so that nothing from CUDA is
// needed at build time. Values and layouts are those of cuda.h (driver API v2 symbols).
typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;
typedef unsigned long long CUdeviceptr;

static void *em_lib;
static CUresult (*p_cuInit)(unsigned);
static CUresult (*p_cuDeviceGetCount)(int *);
static CUresult (*p_cuDeviceGet)(CUdevice *, int);
static CUresult (*p_cuDeviceGetName)(char *, int, CUdevice);
static CUresult (*p_cuDeviceGetAttribute)(int *, int, CUdevice);
static CUresult (*p_cuDeviceTotalMem)(size_t *, CUdevice);
static CUresult (*p_cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
static CUresult (*p_cuDevicePrimaryCtxRelease)(CUdevice);
static CUresult (*p_cuCtxGetCurrent)(CUcontext *);
static CUresult (*p_cuCtxSetCurrent)(CUcontext);
static CUresult (*p_cuCtxSynchronize)(void);
static CUresult (*p_cuModuleLoadData)(CUmodule *, const void *);
static CUresult (*p_cuModuleUnload)(CUmodule);
static CUresult (*p_cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
static CUresult (*p_cuModuleGetGlobal)(CUdeviceptr *, size_t *, CUmodule, const char *);
static CUresult (*p_cuMemAlloc)(CUdeviceptr *, size_t);
static CUresult (*p_cuMemFree)(CUdeviceptr);
static CUresult (*p_cuMemGetInfo)(size_t *, size_t *);
static CUresult (*p_cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
static CUresult (*p_cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
static CUresult (*p_cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
static CUresult (*p_cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
static CUresult (*p_cuMemAllocHost)(void **, size_t);
static CUresult (*p_cuMemFreeHost)(void *);
static CUresult (*p_cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, void *);
static CUresult (*p_cuMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, void *);
CUresult (*p_cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                    unsigned, void *, void **, void **);
static CUresult (*p_cuGetErrorName)(CUresult, const char **);
static CUresult (*p_cuFuncSetAttribute)(CUfunction, int, int);

#include "launch.h"

// The entry points launch.h declares for graph.go (defined here, set by em_load).
CUresult (*p_cuGraphCreate)(CUgraph *, unsigned);
CUresult (*p_cuGraphAddKernelNode)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, const em_knp *);
CUresult (*p_cuGraphInstantiateWithFlags)(CUgraphExec *, CUgraph, unsigned long long);
CUresult (*p_cuGraphLaunch)(CUgraphExec, void *);
CUresult (*p_cuGraphExecDestroy)(CUgraphExec);
CUresult (*p_cuGraphDestroy)(CUgraph);
CUresult (*p_cuGraphAddDependencies_v2)(CUgraph, const CUgraphNode *, const CUgraphNode *, const em_edge *, size_t);
CUresult (*p_cuLaunchKernelEx)(const em_launch_cfg *, CUfunction, void **, void **);
CUresult (*p_cuStreamCreate)(CUstream *, unsigned);
CUresult (*p_cuStreamDestroy)(CUstream);
CUresult (*p_cuStreamBeginCapture)(CUstream, int);
CUresult (*p_cuStreamEndCapture)(CUstream, CUgraph *);
CUresult (*p_cuGraphAddChildGraphNode)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, CUgraph);
CUresult (*p_cuEventCreate)(CUevent *, unsigned);
CUresult (*p_cuEventRecord)(CUevent, void *);
CUresult (*p_cuEventElapsedTime)(float *, CUevent, CUevent);
CUresult (*p_cuEventDestroy)(CUevent);
CUresult (*p_cuEventSynchronize)(CUevent);
CUresult (*p_cuEventQuery)(CUevent);

// em_load opens libcuda.so.1 and resolves every symbol; it returns NULL or an error text.
static const char *em_load(void) {
	em_lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!em_lib) return dlerror();
#define SYM(p, name) \
	*(void **)(&p) = dlsym(em_lib, name); \
	if (!p) return "missing symbol " name;
	SYM(p_cuInit, "cuInit")
	SYM(p_cuDeviceGetCount, "cuDeviceGetCount")
	SYM(p_cuDeviceGet, "cuDeviceGet")
	SYM(p_cuDeviceGetName, "cuDeviceGetName")
	SYM(p_cuDeviceGetAttribute, "cuDeviceGetAttribute")
	SYM(p_cuDeviceTotalMem, "cuDeviceTotalMem_v2")
	SYM(p_cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")
	SYM(p_cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2")
	SYM(p_cuCtxGetCurrent, "cuCtxGetCurrent")
	SYM(p_cuCtxSetCurrent, "cuCtxSetCurrent")
	SYM(p_cuCtxSynchronize, "cuCtxSynchronize")
	SYM(p_cuModuleLoadData, "cuModuleLoadData")
	SYM(p_cuModuleUnload, "cuModuleUnload")
	SYM(p_cuModuleGetFunction, "cuModuleGetFunction")
	SYM(p_cuModuleGetGlobal, "cuModuleGetGlobal_v2")
	SYM(p_cuMemAlloc, "cuMemAlloc_v2")
	SYM(p_cuMemFree, "cuMemFree_v2")
	SYM(p_cuMemGetInfo, "cuMemGetInfo_v2")
	SYM(p_cuMemcpyHtoD, "cuMemcpyHtoD_v2")
	SYM(p_cuMemcpyDtoH, "cuMemcpyDtoH_v2")
	SYM(p_cuMemcpyDtoD, "cuMemcpyDtoD_v2")
	SYM(p_cuMemsetD8, "cuMemsetD8_v2")
	SYM(p_cuMemAllocHost, "cuMemAllocHost_v2")
	SYM(p_cuMemFreeHost, "cuMemFreeHost")
	SYM(p_cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2")
	SYM(p_cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2")
	SYM(p_cuLaunchKernel, "cuLaunchKernel")
	SYM(p_cuGetErrorName, "cuGetErrorName")
	SYM(p_cuFuncSetAttribute, "cuFuncSetAttribute")
	SYM(p_cuGraphCreate, "cuGraphCreate")
	SYM(p_cuGraphAddKernelNode, "cuGraphAddKernelNode")
	SYM(p_cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags")
	SYM(p_cuGraphLaunch, "cuGraphLaunch")
	SYM(p_cuGraphExecDestroy, "cuGraphExecDestroy")
	SYM(p_cuGraphDestroy, "cuGraphDestroy")
#undef SYM
	// Optional (drivers of CUDA 12.3 and later): without it every edge is a full one.
	*(void **)(&p_cuGraphAddDependencies_v2) = dlsym(em_lib, "cuGraphAddDependencies_v2");
	// Optional (CUDA 12.0 and later): without it direct launches wait in full.
	*(void **)(&p_cuLaunchKernelEx) = dlsym(em_lib, "cuLaunchKernelEx");
	*(void **)(&p_cuStreamCreate) = dlsym(em_lib, "cuStreamCreate");
	*(void **)(&p_cuStreamDestroy) = dlsym(em_lib, "cuStreamDestroy_v2");
	*(void **)(&p_cuStreamBeginCapture) = dlsym(em_lib, "cuStreamBeginCapture_v2");
	*(void **)(&p_cuStreamEndCapture) = dlsym(em_lib, "cuStreamEndCapture");
	*(void **)(&p_cuGraphAddChildGraphNode) = dlsym(em_lib, "cuGraphAddChildGraphNode");
	*(void **)(&p_cuEventCreate) = dlsym(em_lib, "cuEventCreate");
	*(void **)(&p_cuEventRecord) = dlsym(em_lib, "cuEventRecord");
	*(void **)(&p_cuEventElapsedTime) = dlsym(em_lib, "cuEventElapsedTime");
	*(void **)(&p_cuEventDestroy) = dlsym(em_lib, "cuEventDestroy_v2");
	*(void **)(&p_cuEventSynchronize) = dlsym(em_lib, "cuEventSynchronize");
	*(void **)(&p_cuEventQuery) = dlsym(em_lib, "cuEventQuery");
	return 0;
}

// Every call first makes ctx current on the calling OS thread (goroutines move).
static CUresult em_ctx(CUcontext ctx) {
	CUcontext cur = 0;
	CUresult r = p_cuCtxGetCurrent(&cur);
	if (r || cur == ctx) return r;
	return p_cuCtxSetCurrent(ctx);
}

static CUresult em_init(void) { return p_cuInit(0); }
static CUresult em_device_count(int *n) { return p_cuDeviceGetCount(n); }
static CUresult em_device(int ord, CUdevice *d, char *name, int nlen, size_t *mem, int *major, int *minor, int *sms, int *smem) {
	CUresult r = p_cuDeviceGet(d, ord);
	if (!r) r = p_cuDeviceGetName(name, nlen, *d);
	if (!r) r = p_cuDeviceTotalMem(mem, *d);
	if (!r) r = p_cuDeviceGetAttribute(major, 75, *d); // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
	if (!r) r = p_cuDeviceGetAttribute(minor, 76, *d); // ..._MINOR
	if (!r) r = p_cuDeviceGetAttribute(sms, 16, *d);   // ..._MULTIPROCESSOR_COUNT
	if (!r) r = p_cuDeviceGetAttribute(smem, 97, *d);  // ..._MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
	return r;
}
static CUresult em_ctx_retain(CUdevice d, CUcontext *ctx) { return p_cuDevicePrimaryCtxRetain(ctx, d); }
static CUresult em_ctx_release(CUdevice d) { return p_cuDevicePrimaryCtxRelease(d); }
static CUresult em_sync(CUcontext ctx) {
	CUresult r = em_ctx(ctx);
	return r ? r : p_cuCtxSynchronize();
}
static CUresult em_module_load(CUcontext ctx, CUmodule *m, const void *img) {
	CUresult r = em_ctx(ctx);
	return r ? r : p_cuModuleLoadData(m, img);
}
static CUresult em_module_unload(CUcontext ctx, CUmodule m) {
	CUresult r = em_ctx(ctx);
	return r ? r : p_cuModuleUnload(m);
}
static CUresult em_function(CUfunction *f, CUmodule m, const char *name) { return p_cuModuleGetFunction(f, m, name); }
static CUresult em_global(CUcontext ctx, CUdeviceptr *p, size_t *n, CUmodule m, const char *name) {
	CUresult r = em_ctx(ctx);
	return r ? r : p_cuModuleGetGlobal(p, n, m, name);
}
// em_max_dynamic_smem raises f's dynamic shared memory limit
// (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
static CUresult em_max_dynamic_smem(CUcontext ctx, CUfunction f, int bytes) {
	CUresult r = em_ctx(ctx);
	return r ? r : p_cuFuncSetAttribute(f, 8, bytes);
}
// em_carveout sets f's preferred shared memory carveout, a percentage of the SM's
// unified L1 and shared memory (CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT).
static CUresult em_carveout(CUcontext ctx, CUfunction f, int pct) {
	CUresult r = em_ctx(ctx);
	return r ? r : p_cuFuncSetAttribute(f, 9, pct);
}
static CUresult em_alloc(CUcontext ctx, CUdeviceptr *p, size_t n) {
	CUresult r = em_ctx(ctx);
	if (!r) r = p_cuMemAlloc(p, n);
	if (!r) r = p_cuMemsetD8(*p, 0, n);
	return r;
}
static CUresult em_mem_info(CUcontext ctx, size_t *free, size_t *total) {
	CUresult r = em_ctx(ctx);
	return r ? r : p_cuMemGetInfo(free, total);
}
static CUresult em_free(CUcontext ctx, CUdeviceptr p) {
	CUresult r = em_ctx(ctx);
	return r ? r : p_cuMemFree(p);
}
static CUresult em_htod(CUcontext ctx, CUdeviceptr dst, const void *src, size_t n) {
	CUresult r = em_ctx(ctx);
	return r ? r : p_cuMemcpyHtoD(dst, src, n);
}
// em_htod_async queues a copy from pinned host memory on the default stream.
static CUresult em_htod_async(CUcontext ctx, CUdeviceptr dst, const void *src, size_t n) {
	CUresult r = em_ctx(ctx);
	return r ? r : p_cuMemcpyHtoDAsync(dst, src, n, 0);
}
// em_dtoh_async queues a copy into pinned host memory on the default stream.
static CUresult em_dtoh_async(CUcontext ctx, void *dst, CUdeviceptr src, size_t n) {
	CUresult r = em_ctx(ctx);
	return r ? r : p_cuMemcpyDtoHAsync(dst, src, n, 0);
}
static CUresult em_host_alloc(CUcontext ctx, void **p, size_t n) {
	CUresult r = em_ctx(ctx);
	return r ? r : p_cuMemAllocHost(p, n);
}
static CUresult em_host_free(CUcontext ctx, void *p) {
	CUresult r = em_ctx(ctx);
	return r ? r : p_cuMemFreeHost(p);
}
static CUresult em_dtoh(CUcontext ctx, void *dst, CUdeviceptr src, size_t n) {
	CUresult r = em_ctx(ctx);
	return r ? r : p_cuMemcpyDtoH(dst, src, n);
}
static CUresult em_dtod(CUcontext ctx, CUdeviceptr dst, CUdeviceptr src, size_t n) {
	CUresult r = em_ctx(ctx);
	return r ? r : p_cuMemcpyDtoD(dst, src, n);
}
// em_launch launches f on the default stream; args holds n 8-byte slots, one per kernel
// parameter (the driver reads each parameter's size from the slot's start).
static CUresult em_launch(CUcontext ctx, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                          unsigned smem, uint64_t *args, int n) {
	void *ptrs[EM_MAX_ARGS];
	for (int i = 0; i < n && i < EM_MAX_ARGS; i++) ptrs[i] = &args[i];
	CUresult r = em_ctx(ctx);
	return r ? r : p_cuLaunchKernel(f, gx, gy, gz, bx, 1, 1, smem, 0, ptrs, 0);
}
// em_ctx_current makes ctx current on the calling thread (em_ctx, for graph.go's C code).
CUresult em_ctx_current(CUcontext ctx) { return em_ctx(ctx); }
// em_event_record records event *e, made first with flags when NULL, on the legacy
// default stream, where every batch and copy is queued (gputime.go's clock, feed.go's
// pending reads); em_event_free destroys one.
CUresult em_event_record(CUcontext ctx, CUevent *e, unsigned flags) {
	CUresult r = em_ctx(ctx);
	if (!r && !*e) r = p_cuEventCreate(e, flags);
	if (!r) r = p_cuEventRecord(*e, NULL);
	return r;
}
void em_event_free(CUcontext ctx, CUevent e) {
	if (!em_ctx(ctx)) p_cuEventDestroy(e);
}

static const char *em_error_name(CUresult r) {
	const char *s = 0;
	if (p_cuGetErrorName(r, &s) || !s) return "CUDA_ERROR_UNKNOWN";
	return s;
}
