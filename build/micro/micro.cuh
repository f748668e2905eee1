// micro.cuh: what build/micro's standalone CUDA programs share: error checks, the PDL
// wait, launches with programmatic stream serialization (captured as programmatic graph
// edges, as Ember's steps have), and the best time of a captured graph.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

__device__ __forceinline__ void pdl() {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

// ld_acquire reads *p with acquire semantics at GPU scope (a grid barrier's spin).
__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

// count_meet: the block's writes before it are seen by the n blocks counting on *count
// after it (a fence and an atomic add by thread 0, then a spin until the count reaches
// the next multiple of n: launch k's blocks wait for n (k + 1); never reset). The meetings
// of ah1.cuh's and mla1.cuh's blocks.
__device__ __forceinline__ void count_meet(unsigned* count, unsigned n) {
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned old;
        asm volatile("fence.acq_rel.gpu;" ::: "memory");
        asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(count) : "memory");
        const unsigned target = (old / n + 1) * n;
        while ((int)(ld_acquire(count) - target) < 0) {
        }
    }
    __syncthreads();
}
// launch_cl launches k with smem bytes of dynamic shared memory, and with cs > 0 in
// clusters of cs blocks (the launch attribute); launch_smem with none; launch with no
// shared memory either.
template <typename K, typename... A>
static void launch_cl(cudaStream_t s, K k, dim3 grid, int block, int smem, int cs, A... a) {
    cudaLaunchConfig_t c = {};
    c.gridDim = grid;
    c.blockDim = block;
    c.dynamicSmemBytes = smem;
    c.stream = s;
    cudaLaunchAttribute at[2];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    at[1].id = cudaLaunchAttributeClusterDimension;
    at[1].val.clusterDim.x = cs, at[1].val.clusterDim.y = 1, at[1].val.clusterDim.z = 1;
    c.attrs = at;
    c.numAttrs = cs > 0 ? 2 : 1;
    CK(cudaLaunchKernelEx(&c, k, a...));
}

template <typename K, typename... A>
static void launch_smem(cudaStream_t s, K k, dim3 grid, int block, int smem, A... a) {
    launch_cl(s, k, grid, block, smem, 0, a...);
}

template <typename K, typename... A>
static void launch(cudaStream_t s, K k, dim3 grid, int block, A... a) {
    launch_smem(s, k, grid, block, 0, a...);
}

// graph_best_ms captures body's launches on s as a graph, replays it warm times, then
// reps times, and returns the fastest replay in milliseconds.
template <typename F>
static float graph_best_ms(cudaStream_t s, F body, int warm, int reps) {
    cudaGraph_t g;
    cudaGraphExec_t ge;
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    body();
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiateWithFlags(&ge, g, 0));
    for (int r = 0; r < warm; r++) CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
    float best = 1e30f;
    for (int r = 0; r < reps; r++) {
        CK(cudaEventRecord(e0, s));
        CK(cudaGraphLaunch(ge, s));
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (ms < best) best = ms;
    }
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    return best;
}

// stream_share reads part `part` of `parts` of n16 16-byte words at w (four loads in
// flight a thread) and returns a hash of them; kstream is a chain's streaming product:
// the grid's share each, after the PDL wait. kgap spins ns nanoseconds after its wait.
// With EF its loads take an L2 evict-first policy (build/micro/ifetch.cu).
template <bool EF = false>
__device__ __forceinline__ unsigned stream_share(const uint4* w, size_t n16, int part, int parts) {
    const size_t per = (n16 + parts - 1) / parts;
    const size_t lo = per * part, hi = lo + per < n16 ? lo + per : n16;
    unsigned acc = 0;
    uint64_t pol = 0;
    if (EF) asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
    for (size_t i = lo + threadIdx.x; i < hi; i += 4 * blockDim.x) {
        uint4 v[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const size_t j = i + u * blockDim.x;
            if (j >= hi)
                v[u] = make_uint4(0, 0, 0, 0);
            else if (EF)
                asm volatile("ld.global.nc.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                             : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w) : "l"(w + j), "l"(pol));
            else
                v[u] = __ldg(w + j);
        }
#pragma unroll
        for (int u = 0; u < 4; u++) acc ^= v[u].x + v[u].y * 3 + v[u].z * 5 + v[u].w * 7;
    }
    return acc;
}

__global__ void __launch_bounds__(256) kstream(const uint4* w, size_t n16, unsigned* out) {
    pdl();
    const unsigned acc = stream_share(w, n16, blockIdx.x, gridDim.x);
    if (acc == 0x12345678) out[blockIdx.x * 256 + threadIdx.x] = acc;
}

// gtime is the global timer (ns).
__device__ __forceinline__ uint64_t gtime() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ void spin(int ns) {
    const uint64_t t0 = gtime();
    while (gtime() - t0 < (uint64_t)ns) {}
}

__global__ void kgap(unsigned* out, int ns) {
    pdl();
    if (ns) spin(ns);
}
