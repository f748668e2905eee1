// launch.h: the CUDA driver API types and entry points shared by driver.go's C code
// (which loads them) and graph.go's (kernel batches and graphs). cgo compiles each Go
// file's C preamble apart, so what both use is declared here and defined in driver.go.
#pragma once
// EM_MAX_ARGS is the most parameters a kernel launched through em_launch, em_launch_many
// or a graph node may have (maxKernelArgs in cuda.go).
#define EM_MAX_ARGS 48
#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef void *CUcontext;
typedef void *CUfunction;

CUresult em_ctx_current(CUcontext ctx);

// em_arg_ptrs points ptrs at a launch's n parameter slots, taken from args at *off,
// and moves *off past them (a batch's launches take their slots in order).
static inline void em_arg_ptrs(void **ptrs, uint64_t *args, size_t *off, int n) {
	for (int j = 0; j < n && j < EM_MAX_ARGS; j++) ptrs[j] = &args[*off + j];
	*off += n;
}
extern CUresult (*p_cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                    unsigned, void *, void **, void **);

typedef void *CUgraph;
typedef void *CUgraphNode;
typedef void *CUgraphExec;
// CUDA_KERNEL_NODE_PARAMS (v1) of cuda.h.
typedef struct {
	CUfunction func;
	unsigned gx, gy, gz, bx, by, bz, smem;
	void **kernelParams;
	void **extra;
} em_knp;
extern CUresult (*p_cuGraphCreate)(CUgraph *, unsigned);
extern CUresult (*p_cuGraphAddKernelNode)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, const em_knp *);
extern CUresult (*p_cuGraphInstantiateWithFlags)(CUgraphExec *, CUgraph, unsigned long long);
extern CUresult (*p_cuGraphLaunch)(CUgraphExec, void *);
extern CUresult (*p_cuGraphExecDestroy)(CUgraphExec);
extern CUresult (*p_cuGraphDestroy)(CUgraph);
// CUgraphEdgeData of cuda.h (CUDA 12.3+): a programmatic edge (type 1) from the
// upstream kernel's programmatic port (1) lets the downstream kernel launch while the
// upstream one finishes; the downstream kernel's griddepcontrol.wait then waits for it.
typedef struct {
	unsigned char from_port, to_port, type, reserved[5];
} em_edge;
extern CUresult (*p_cuGraphAddDependencies_v2)(CUgraph, const CUgraphNode *, const CUgraphNode *, const em_edge *, size_t);
// CUlaunchAttribute and CUlaunchConfig of cuda.h (CUDA 12.0+): the attribute's id, padding
// to 8 bytes, and a 64-byte value; id 6 (CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
// with a non-zero value lets the kernel launch while the kernel before it in the stream
// finishes, its griddepcontrol.wait then waiting for it (as a programmatic graph edge).
typedef struct {
	int id;
	char pad[4];
	union {
		char bytes[64];
		int allowed;
	} value;
} em_attr;
typedef struct {
	unsigned gx, gy, gz, bx, by, bz, smem;
	void *stream;
	em_attr *attrs;
	unsigned nattrs;
} em_launch_cfg;
extern CUresult (*p_cuLaunchKernelEx)(const em_launch_cfg *, CUfunction, void **, void **);
// Stream capture of cuBLASLt's products into child graphs (optional symbols; without
// them batches holding such products are launched directly).
typedef void *CUstream;
extern CUresult (*p_cuStreamCreate)(CUstream *, unsigned);
extern CUresult (*p_cuStreamDestroy)(CUstream);
extern CUresult (*p_cuStreamBeginCapture)(CUstream, int);
extern CUresult (*p_cuStreamEndCapture)(CUstream, CUgraph *);
extern CUresult (*p_cuGraphAddChildGraphNode)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, CUgraph);
// Events, for the device clock of EMBER_CUDA_STATS (gputime.go; optional symbols).
typedef void *CUevent;
extern CUresult (*p_cuEventCreate)(CUevent *, unsigned);
extern CUresult (*p_cuEventRecord)(CUevent, void *);
extern CUresult (*p_cuEventElapsedTime)(float *, CUevent, CUevent);
extern CUresult (*p_cuEventDestroy)(CUevent);
// For Feeder's pending reads (feed.go; optional symbols).
extern CUresult (*p_cuEventSynchronize)(CUevent);
extern CUresult (*p_cuEventQuery)(CUevent);
CUresult em_event_record(CUcontext ctx, CUevent *e, unsigned flags);
void em_event_free(CUcontext ctx, CUevent e);
