// pfr.cuh: mvp.cu's fourth question (session 41): does the engine's chain go faster when
// a separate, always-on prefetcher keeps HBM busy, asking L2 for the weights the chain
// will read next, paced by the chain's own progress?
//
// The step's gaps (norms, attention, the ramp and tail of each launch) leave HBM idle;
// a persistent kernel would fill them from its shared-memory ring, but the ring holds
// only ~5 us an SM (mvr.cuh, ring.cu). L2 holds 50 MB, ~12 us of HBM. Here a few
// one-warp blocks, in their own branch of the step's graph, walk the step's products in
// order, each taking every PFB-th chunk of PFC KiB (cp.async.bulk.prefetch.L2), never
// more than PFW MiB past the chain's progress: the products' outputs at checkpoints
// (every eighth of a product's rows, set by a reset kernel to a NaN no sum makes),
// polled only when a chunk would pass the window. The chain is the engine's launches,
// unchanged. Session 23 found a product after a gap ~1.6 us faster from L2 than from
// HBM (9.4 MB), and prefetches issued by the chain's own kernels no help. Session 41 on
// the H200 (NOTES.md): with chunks of 1-4 MiB the prefetcher keeps up and the chain's
// time does not change.
#pragma once

struct PfProd {
    const uint8_t* w;
    long long bytes, off;  // off: the product's first byte in the step's order
};
struct PfCheck {
    long long end;      // the step's bytes done once *flag is set
    const float* flag;  // an output row of the product
};

__device__ __forceinline__ float ld_relaxed_f32(const float* p) {
    float v;
    asm volatile("ld.relaxed.gpu.global.f32 %0, [%1];" : "=f"(v) : "l"(p) : "memory");
    return v;
}

// PF_UNSET is the checkpoints' value until the chain writes them (a NaN no sum makes).
#define PF_UNSET 0x7fc0dead

__global__ void pf_reset(const PfCheck* C, int nc) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < nc; i += gridDim.x * blockDim.x) *(unsigned*)C[i].flag = PF_UNSET;
}

// pf_walk: block b's chunks (every gridDim.x-th of the step's, PFC bytes each) asked of
// L2 in order, none past the window beyond the last checkpoint seen set; lane 0 keeps
// the window. Mode 0: one bulk prefetch a chunk (lane 0). Mode 1 (PFMODE=1, session 41;
// run in session 42: the chain 3.2-5.3 ms beside it against 1.681 alone, NOTES.md):
// the warp's 32 lanes each ask for 128-byte lines (prefetch.global.L2), a
// warp instruction a 4 KiB: whether session 41's bulk prefetches of 1-4 MiB did reach
// L2 is not known (the chain did not change, where weights already in L2 made it 0.28
// ms shorter). Mode 2: the lanes read the lines (ld.global.cg, 16 bytes each, into a
// sink), which certainly brings them in, at the price of the loads' registers.
__global__ void pf_walk(const PfProd* P, int np, const PfCheck* C, int nc, long long window, int chunk, int mode, unsigned* sink) {
    const int lane = threadIdx.x & 31;
    if (threadIdx.x >= 32) return;
    int ci = 0;
    long long done = 0, c = 0;
    unsigned acc = 0;
    for (int j = 0; j < np; j++) {
        const PfProd p = P[j];
        for (long long o = 0; o < p.bytes; o += chunk, c++) {
            if (c % gridDim.x != blockIdx.x) continue;
            const long long pos = p.off + o;
            if (lane == 0) {
                uint64_t t0 = 0;
                while (pos >= done + window && ci < nc) {  // (a checkpoint unset for 100 us is taken as passed)
                    const uint64_t t = gtime();
                    if (!t0) t0 = t;
                    if (__float_as_uint(ld_relaxed_f32(C[ci].flag)) != PF_UNSET || t - t0 > 100000) done = C[ci++].end, t0 = 0;
                    else __nanosleep(200);
                }
            }
            __syncwarp();
            const long long n = min((long long)chunk, p.bytes - o);
            if (mode == 0) {
                if (lane == 0) asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p.w + o), "r"((uint32_t)n) : "memory");
            } else if (mode == 1) {
                for (long long q = 128 * lane; q < n; q += 128 * 32)
                    asm volatile("prefetch.global.L2 [%0];" ::"l"(p.w + o + q) : "memory");
            } else {
                for (long long q = 16 * lane; q < n; q += 16 * 32 * 4) {  // four loads in flight a lane
                    uint4 v[4];
#pragma unroll
                    for (int u = 0; u < 4; u++) v[u] = q + 512 * u < n ? __ldcg((const uint4*)(p.w + o + q + 512 * u)) : make_uint4(0, 0, 0, 0);
#pragma unroll
                    for (int u = 0; u < 4; u++) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
                }
            }
        }
    }
    if (acc == 0x9e3779b9u) sink[blockIdx.x] = acc;
}
