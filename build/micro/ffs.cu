// ffs.cu: a batch-1 decode layer's feed-forward half as one launch split along the hidden
// width, so that no block waits for another's gate/up (written in session 68).
//
// The chain (the engine's launches, PDL edges; ffn.cu's): mmv_multi (gate and up, 14,336
// rows of 4,096 each), swiglu_q8_k (SwiGLU and the Q8_K rounding of the 14,336 values),
// then mmv_q4_k_1 or mmv_q6_k_1 (down, 4,096 rows of 14,336). Between gate/up and down
// sits a whole-grid dependency: down's first step needs every gate/up row of its chunk.
// ffn.cu (session 41) kept the chain's order of work and made the dependency chunk-wise
// through counters; it lost 2.8x.
//
// ffs cuts the other way. The hidden width is 56 Q8_K blocks of 256 values (a group); a
// cluster of CS blocks owns GPC groups: block r of the cluster computes its 256 GPC / CS
// gate and up rows (mv1_q4_k's lanes and formulas), their SwiGLU (swiglu_q8_k's), and
// after a cluster barrier every block reads the cluster's SwiGLU values from its peers'
// shared memory (DSMEM) and rounds them to Q8_K itself (q8k_quant_warp: swiglu_q8_k's
// bits). Then block r computes down's rows [4096 r / CS, 4096 (r + 1) / CS) over the
// cluster's GPC columns of 256 only: a partial sum a row, written to P[cluster][row].
// The rows' partials of the 56 / GPC clusters are added in cluster order by the last
// block of each rank to arrive (a counter a rank; RED=0, deterministic), or by float
// atomics into the output (RED=1: the order is not fixed; timing only, to see what the
// reduction costs). The only waits are the cluster's barriers and the reduction's tail.
//
// Down's sum is then in another order than mv1's (a column's four lanes, then the
// columns in order), so the outputs are compared with a tolerance; the Q8_K SwiGLU row
// (every cluster's rank-0 block writes its blocks) is compared bit for bit.
//
// nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/ffs ffs.cu && /tmp/ffs
#include "micro.cuh"
#include "../../kernels/cuda/matmul.cu"
#include "../../kernels/cuda/quant.cu"
#include <cstring>
#include <cmath>
#include <vector>

#define FS_E 4096
#define FS_F 14336
#define FS_NG (FS_F / 256)

struct FsArgs {
    const uint8_t *gate, *up, *down;  // Q4_K [F][E] twice; down Q4_K or Q6_K (mv1's layout) [E][F]
    i64 gws, dws;
    const uint8_t* x;  // Q8_K row of E
    float* P;          // partials [clusters][E]
    float* d;          // E (down's output)
    uint8_t* x14;      // Q8_K row of F (SwiGLU's, for the bits check)
    unsigned* cnt;     // a counter a rank (RED 0 and 2), zero between launches
    int red;           // 0: fs_sum's loop; 1: float atomics (timing only); 2: fs_sum's split loads
    int dfirst;        // down's first step loaded before the cluster's barriers
};

__device__ __forceinline__ unsigned fs_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
__device__ __forceinline__ void fs_csync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ void fs_carrive() { asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory"); }
__device__ __forceinline__ void fs_cwait() { asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory"); }
// fs_peer reads 16 bytes at shared address a of cluster block r.
__device__ __forceinline__ float4 fs_peer(const void* a, unsigned r) {
    unsigned s = (unsigned)__cvta_generic_to_shared(a), p;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(p) : "r"(s), "r"(r));
    float4 v;
    asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(p) : "memory");
    return v;
}

// fs_gu: the block's gate and up rows as tasks of Q4K_R1 rows (tasks 0 .. RA/4 - 1 gate's,
// then up's), warp w taking w, w + W, ...; each task two steps of eight blocks (E = 4,096:
// 16 blocks a row), the next step's weights loaded before the current one is summed,
// across task boundaries too. The first step's loads come before the PDL wait and the
// row's staging. Sums go to gs / us (shared).
template <int RA, int W>
__device__ __forceinline__ void fs_gu(const FsArgs& a, int i0, uint8_t* xs, float* gs, float* us) {
    constexpr int NT = 2 * RA / Q4K_R1;  // tasks
    const int lane = threadIdx.x & 31, wp = threadIdx.x >> 5, c = lane & 3;
    auto rowp = [&](int task, int i) -> const uint8_t* {
        const bool up = task >= NT / 2;
        const int r = i0 + (up ? task - NT / 2 : task) * Q4K_R1 + i;
        return (up ? a.up : a.gate) + (i64)r * a.gws;
    };
    uint4 h[Q4K_R1], qa[Q4K_R1], qb[Q4K_R1];
    int task = wp, half = 0;
    if (task < NT) {
#pragma unroll
        for (int i = 0; i < Q4K_R1; i++) {
            const uint8_t* p = rowp(task, i) + 144 * (lane >> 2);
            h[i] = *(const uint4*)p, qa[i] = *(const uint4*)(p + 16 + 32 * c), qb[i] = *(const uint4*)(p + 32 + 32 * c);
        }
    }
    pdl_wait();
    mv1_stage(xs, a.x, mv1_bytes(T_Q4_K, FS_E), FS_E, 0);
    mv1_wait();
    float acc[Q4K_R1] = {};
    while (task < NT) {
        const int ntask = half ? task + W : task, nhalf = half ^ 1;
        uint4 nh[Q4K_R1], na[Q4K_R1], nq[Q4K_R1];
        if (ntask < NT) {
#pragma unroll
            for (int i = 0; i < Q4K_R1; i++) {
                const uint8_t* p = rowp(ntask, i) + 144 * ((lane >> 2) + 8 * nhalf);
                nh[i] = *(const uint4*)p, na[i] = *(const uint4*)(p + 16 + 32 * c), nq[i] = *(const uint4*)(p + 32 + 32 * c);
            }
        }
        const int ib = (lane >> 2) + 8 * half;
        int xv[16];
        float yd;
        int4 bs;
        q4k_x(xs, FS_E, ib, c, true, xv, &yd, &bs);
#pragma unroll
        for (int i = 0; i < Q4K_R1; i++) {
            int sb;
            const int sa = q4k_dot(qa[i], qb[i], xv, &sb);
            acc[i] += q4k_part(h[i], c, sa, sb, yd, bs);
            h[i] = nh[i], qa[i] = na[i], qb[i] = nq[i];
        }
        if (half) {
            const bool up = task >= NT / 2;
            float* o = up ? us : gs;
            const int r0 = (up ? task - NT / 2 : task) * Q4K_R1;
#pragma unroll
            for (int i = 0; i < Q4K_R1; i++) {
                const float s = warp_sum(acc[i]);
                if (lane == 0) o[r0 + i] = s;
                acc[i] = 0;
            }
        }
        task = ntask, half = nhalf;
    }
}

// A lane's weights of one row's block in down (Q4_K: header and two quant chunks; Q6_K:
// ql, ql + 32, qh, scales, d: mv1's planar layout).
struct FsWt {
    uint4 a, b, c;
    uint2 sc;
    uint16_t dw;
};
template <int DT>
__device__ __forceinline__ void fs_dload(const FsArgs& a, int r, int ib, FsWt& w) {
    constexpr int nb = FS_F / 256;
    const int t = threadIdx.x & 3, hh = t >> 1, g = t & 1;
    const uint8_t* row = a.down + (i64)r * a.dws;
    if (DT == T_Q4_K) {
        const uint8_t* p = row + 144 * ib;
        w.a = *(const uint4*)p, w.b = *(const uint4*)(p + 16 + 32 * t), w.c = *(const uint4*)(p + 32 + 32 * t);
    } else {
        const uint8_t* ql = row + 128 * ib + 64 * hh + 16 * g;
        w.a = *(const uint4*)ql, w.b = *(const uint4*)(ql + 32);
        w.c = *(const uint4*)(row + 128 * nb + 64 * ib + 32 * hh + 16 * g);
        w.sc = *(const uint2*)(row + 192 * nb + 16 * ib + 8 * hh);
        w.dw = *(const uint16_t*)(row + 208 * nb + 2 * ib);
    }
}
// fs_dterm is the lane's term of a row's block jj of the cluster against X (Q8_K, K).
template <int DT, int K>
__device__ __forceinline__ float fs_dterm(const FsWt& w, int jj, const uint8_t* X) {
    const int t = threadIdx.x & 3, hh = t >> 1, g = t & 1;
    if (DT == T_Q4_K) {
        const int4* xb = (const int4*)(X + 256 * jj + 64 * t);
        int xv[16];
#pragma unroll
        for (int q = 0; q < 4; q++) {
            const int4 v = xb[q];
            xv[4 * q] = v.x, xv[4 * q + 1] = v.y, xv[4 * q + 2] = v.z, xv[4 * q + 3] = v.w;
        }
        const float yd = ((const float*)(X + K))[jj];
        const int4 bs = *(const int4*)(X + Q8K_BSUMS(K) + 64 * jj + 16 * t);
        int sb;
        const int sa = q4k_dot(w.b, w.c, xv, &sb);
        return q4k_part(w.a, t, sa, sb, yd, bs);
    } else {
        const uint8_t* xb = X + 256 * jj + 128 * hh + 16 * g;
        int4 xv[4];
#pragma unroll
        for (int q = 0; q < 4; q++) xv[q] = *(const int4*)(xb + 32 * q);
        return q6k_part(w.a, w.b, w.c, w.sc, w.dw, xv, g, ((const float*)(X + K))[jj]);
    }
}

// fs_down: rows [lo, hi) of down over the cluster's columns j0 .. j0 + GPC - 1, eight rows
// a warp step (lane / 4 the row, lane % 4 the lane of mv1's block), the next step's
// weights loaded before the current one is summed (cur: the first step's, loaded by the
// caller with fs_dfirst); the row's partial (its columns' four lane terms by shuffles,
// the columns in order) goes to P.
template <int DT, int GPC, int W>
__device__ __forceinline__ void fs_dfirst(const FsArgs& a, int lo, int hi, int j0, FsWt (&cur)[GPC]) {
    const int r = lo + 8 * (threadIdx.x >> 5) + ((threadIdx.x & 31) >> 2);
    if (r - ((threadIdx.x & 31) >> 2) < hi) {
#pragma unroll
        for (int jj = 0; jj < GPC; jj++) fs_dload<DT>(a, min(r, hi - 1), j0 + jj, cur[jj]);
    }
}
template <int DT, int GPC, int W>
__device__ __forceinline__ void fs_down(const FsArgs& a, int lo, int hi, int j0, const uint8_t* X, float* P, FsWt (&cur)[GPC]) {
    const int lane = threadIdx.x & 31, wp = threadIdx.x >> 5, t = lane & 3;
    for (int r = lo + 8 * wp + (lane >> 2); r - (lane >> 2) < hi; r += 8 * W) {
        const int rn = r + 8 * W;
        FsWt nx[GPC];
        if (rn - (lane >> 2) < hi) {
#pragma unroll
            for (int jj = 0; jj < GPC; jj++) fs_dload<DT>(a, min(rn, hi - 1), j0 + jj, nx[jj]);
        }
        float s = 0;
#pragma unroll
        for (int jj = 0; jj < GPC; jj++) {
            float v = fs_dterm<DT, 256 * GPC>(cur[jj], jj, X);
            v += __shfl_xor_sync(0xffffffffu, v, 1);
            v += __shfl_xor_sync(0xffffffffu, v, 2);
            s += v;
        }
        if (t == 0 && r < hi) {
            if (a.red == 1) atomicAdd(a.d + r, s);
            else P[r] = s;
        }
#pragma unroll
        for (int jj = 0; jj < GPC; jj++) cur[jj] = nx[jj];
    }
}

__device__ __forceinline__ void fs_fence() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

// fs_sum: rows [lo, hi) of d as the clusters' partials' sum. RED 0: every cluster's
// partial in cluster order by each thread of a float4 of rows; RED 2: S = threads /
// float4s of rows take a contiguous share of the clusters each, all their loads in
// flight, and the S shares are added in order (a fixed order either way).
template <int CS, int NCL, int W>
__device__ __forceinline__ void fs_sum(const FsArgs& a, int lo, int hi, int r, float4* sm) {
    constexpr int F4 = FS_E / CS / 4, T = 32 * W, S = T >= 2 * F4 ? T / F4 : 1, MC = (NCL + S - 1) / S;
    if (a.red == 2 && S > 1) {
        const int q = threadIdx.x % F4, p = threadIdx.x / F4;
        const int c0 = p * NCL / S, c1 = (p + 1) * NCL / S;
        float4 v[MC];
#pragma unroll
        for (int k = 0; k < MC; k++)
            v[k] = c0 + k < c1 ? __ldcg((const float4*)(a.P + (i64)(c0 + k) * FS_E + lo) + q) : make_float4(0, 0, 0, 0);
        float4 s = v[0];
#pragma unroll
        for (int k = 1; k < MC; k++)
            if (c0 + k < c1) s.x += v[k].x, s.y += v[k].y, s.z += v[k].z, s.w += v[k].w;
        if (p < S) sm[p * F4 + q] = s;
        __syncthreads();
        if (p == 0) {
            float4 t = sm[q];
            for (int k = 1; k < S; k++) {
                const float4 u = sm[k * F4 + q];
                t.x += u.x, t.y += u.y, t.z += u.z, t.w += u.w;
            }
            *((float4*)(a.d + lo) + q) = t;
        }
    } else {
        for (int q = 4 * threadIdx.x + lo; q < hi; q += 4 * T) {
            float4 s = __ldcg((const float4*)(a.P + q));
#pragma unroll 8
            for (int c = 1; c < NCL; c++) {
                const float4 v = __ldcg((const float4*)(a.P + (i64)c * FS_E + q));
                s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w;
            }
            *(float4*)(a.d + q) = s;
        }
    }
    if (threadIdx.x == 0) a.cnt[r] = 0;
}

// ffs: grid 56 / GPC clusters of CS blocks of 32 W threads.
template <int CS, int GPC, int W, int DT>
__device__ __forceinline__ void ffs_body(const FsArgs& a) {
    constexpr int RA = 256 * GPC / CS;  // the block's hidden values
    constexpr int NCL = FS_NG / GPC;    // clusters
    static_assert(RA % (4 * Q4K_R1) == 0 || RA % Q4K_R1 == 0, "rows");
    extern __shared__ __align__(16) uint8_t fs_sm[];
    uint8_t* xs = fs_sm;                                         // the input row (5,184 bytes)
    float* gs = (float*)(fs_sm + 5248);                         // RA
    float* us = gs + RA;                                         // RA
    float* vs = us + RA;                                         // RA (SwiGLU)
    uint8_t* xq = (uint8_t*)(vs + RA);                           // Q8_K row of 256 GPC
    __shared__ int last;
    const int r = CS > 1 ? (int)fs_rank() : 0, cl = blockIdx.x / CS, lane = threadIdx.x & 31, wp = threadIdx.x >> 5;
    const int i0 = 256 * GPC * cl + RA * r;  // the block's first hidden index
    fs_gu<RA, W>(a, i0, xs, gs, us);
    const int lo = FS_E * r / CS, hi = FS_E * (r + 1) / CS;
    FsWt cur[GPC];
    if (a.dfirst) fs_dfirst<DT, GPC, W>(a, lo, hi, GPC * cl, cur);  // before the barriers: they depend on nothing
    __syncthreads();
    for (int i = threadIdx.x; i < RA; i += 32 * W) {
        const float gv = gs[i], uv = us[i];
        const float e = (float)exp(-(double)gv);
        vs[i] = gv / (1.0f + e) * uv;
    }
    if (CS > 1) fs_csync();
    else __syncthreads();
    if (wp < GPC) {  // warp q rounds the cluster's group q (every block does it: the same bits)
        float v[8];
        const int k = 256 * wp + 8 * lane;  // the cluster's hidden index of v[0]
        const int pr = k / RA, off = k % RA;
        float4 v0, v1;
        if (CS > 1) v0 = fs_peer(vs + off, pr), v1 = fs_peer(vs + off + 4, pr);
        else v0 = *(const float4*)(vs + off), v1 = *(const float4*)(vs + off + 4);
        v[0] = v0.x, v[1] = v0.y, v[2] = v0.z, v[3] = v0.w, v[4] = v1.x, v[5] = v1.y, v[6] = v1.z, v[7] = v1.w;
        q8k_quant_warp(v, xq, wp, 256 * GPC);
    }
    if (CS > 1) fs_carrive();  // the peers may leave once every block has read their vs
    __syncthreads();
    if (r == 0 && a.x14) {  // the bits check's copy of the cluster's Q8_K blocks
        for (int q = threadIdx.x; q < 256 * GPC; q += 32 * W) a.x14[256 * GPC * cl + q] = xq[q];
        for (int q = threadIdx.x; q < GPC; q += 32 * W) ((float*)(a.x14 + FS_F))[GPC * cl + q] = ((const float*)(xq + 256 * GPC))[q];
        for (int q = threadIdx.x; q < 16 * GPC; q += 32 * W)
            ((int*)(a.x14 + Q8K_BSUMS(FS_F)))[16 * GPC * cl + q] = ((const int*)(xq + Q8K_BSUMS(256 * GPC)))[q];
    }
    if (!a.dfirst) fs_dfirst<DT, GPC, W>(a, lo, hi, GPC * cl, cur);
    fs_down<DT, GPC, W>(a, lo, hi, GPC * cl, xq, a.P + (i64)cl * FS_E, cur);
    if (a.red != 1) {
        __syncthreads();
        if (threadIdx.x == 0) {
            unsigned old;
            fs_fence();
            asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(a.cnt + r) : "memory");
            last = old + 1 == (unsigned)NCL;
            if (last) fs_fence();
        }
        __syncthreads();
        if (last) fs_sum<CS, NCL, W>(a, lo, hi, r, (float4*)fs_sm);  // (xs is free by now)
    }
    if (CS > 1) fs_cwait();
}

// ffs takes its cluster from the launch (cudaLaunchAttributeClusterDimension), ffs_cd
// from __cluster_dims__ as the engine's kernels do (kernels/cuda/ffn.cu; CDIMS=1): the
// engine lost with ffn where this micro gained (session 68), and this is one of the ways
// they differ.
template <int CS, int GPC, int W, int DT>
__global__ void __launch_bounds__(32 * W) ffs(FsArgs a) { ffs_body<CS, GPC, W, DT>(a); }
template <int CS, int GPC, int W, int DT>
__global__ void __cluster_dims__(CS, 1, 1) __launch_bounds__(32 * W) ffs_cd(FsArgs a) { ffs_body<CS, GPC, W, DT>(a); }

static int rowbytes(int t, int K) { return t == T_Q4_K ? K / 256 * 144 : K / 256 * 210; }
static int xbytes(int K) { return ((Q8K_BSUMS(K) + 4 * (K / 16)) + 15) & ~15; }

static void fill_weights(uint8_t* dev, int t, int M, int K, unsigned seed) {
    const int ws = rowbytes(t, K), nb = K / 256;
    std::vector<uint8_t> h((size_t)M * ws);
    unsigned s = seed;
    for (auto& b : h) s = s * 1664525u + 1013904223u, b = (uint8_t)(s >> 24);
    for (int r = 0; r < M; r++) {
        uint8_t* row = h.data() + (size_t)r * ws;
        for (int b = 0; b < nb; b++) {
            s = s * 1664525u + 1013904223u;
            const uint16_t d = (uint16_t)(0x1800 + ((s >> 16) & 0x3ff)), m = (uint16_t)(0x1400 + ((s >> 6) & 0x3ff));
            if (t == T_Q4_K) memcpy(row + 144 * b, &d, 2), memcpy(row + 144 * b + 2, &m, 2);
            else memcpy(row + 208 * nb + 2 * b, &d, 2);
        }
    }
    CK(cudaMemcpy(dev, h.data(), h.size(), cudaMemcpyHostToDevice));
}

template <typename K, typename... A>
static void launch_cl(cudaStream_t s, K k, int grid, int block, int smem, int cs, A... a) {
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
    c.numAttrs = cs > 1 ? 2 : 1;
    CK(cudaLaunchKernelEx(&c, k, a...));
}

struct Variant {
    const char* name;
    int cs, gpc, w;
    void (*q4)(FsArgs);
    void (*q6)(FsArgs);
    void (*q4cd)(FsArgs);
    void (*q6cd)(FsArgs);
};
#define VAR(CS, GPC, W)                                                                                                      \
    {"cs" #CS " gpc" #GPC " w" #W, CS, GPC, W, ffs<CS, GPC, W, T_Q4_K>, ffs<CS, GPC, W, T_Q6_K>, ffs_cd<CS, GPC, W, T_Q4_K>, \
     ffs_cd<CS, GPC, W, T_Q6_K>}

int main() {
    const int L = getenv("L") ? atoi(getenv("L")) : 32, gap = getenv("GAP") ? atoi(getenv("GAP")) : 0;
    const int red = getenv("RED") ? atoi(getenv("RED")) : 0, dfirst = getenv("DFIRST") ? atoi(getenv("DFIRST")) : 1;
    const int cdims = getenv("CDIMS") ? atoi(getenv("CDIMS")) : 0;  // the kernels with __cluster_dims__
    const int gws = rowbytes(T_Q4_K, FS_E);
    struct Layer {
        uint8_t *gate, *up, *down;
        int dtype;
        float *dc, *df;
    };
    std::vector<Layer> ly(L);
    size_t bytes = 0;
    for (int l = 0; l < L; l++) {
        Layer& y = ly[l];
        y.dtype = l % 2 ? T_Q4_K : T_Q6_K;
        CK(cudaMalloc(&y.gate, (size_t)FS_F * gws));
        CK(cudaMalloc(&y.up, (size_t)FS_F * gws));
        CK(cudaMalloc(&y.down, (size_t)FS_E * rowbytes(y.dtype, FS_F)));
        if (l < 2) {
            fill_weights(y.gate, T_Q4_K, FS_F, FS_E, 1 + 3 * l);
            fill_weights(y.up, T_Q4_K, FS_F, FS_E, 2 + 3 * l);
            fill_weights(y.down, y.dtype, FS_E, FS_F, 3 + 3 * l);
        } else {
            CK(cudaMemcpy(y.gate, ly[l % 2].gate, (size_t)FS_F * gws, cudaMemcpyDeviceToDevice));
            CK(cudaMemcpy(y.up, ly[l % 2].up, (size_t)FS_F * gws, cudaMemcpyDeviceToDevice));
            CK(cudaMemcpy(y.down, ly[l % 2].down, (size_t)FS_E * rowbytes(y.dtype, FS_F), cudaMemcpyDeviceToDevice));
        }
        CK(cudaMalloc(&y.dc, FS_E * 4));
        CK(cudaMalloc(&y.df, FS_E * 4));
        CK(cudaMemset(y.df, 0, FS_E * 4));
        bytes += 2 * (size_t)FS_F * gws + (size_t)FS_E * rowbytes(y.dtype, FS_F);
    }
    float* xf;
    uint8_t *x, *x14c, *x14f;
    CK(cudaMalloc(&xf, FS_E * 4));
    CK(cudaMalloc(&x, xbytes(FS_E)));
    CK(cudaMalloc(&x14c, xbytes(FS_F)));
    CK(cudaMalloc(&x14f, xbytes(FS_F)));
    std::vector<float> hx(FS_E);
    for (int j = 0; j < FS_E; j++) hx[j] = (float)((j * 7919) % 2001 - 1000) / 400.0f;
    CK(cudaMemcpy(xf, hx.data(), FS_E * 4, cudaMemcpyHostToDevice));
    quant_q8_k<<<dim3((FS_E / 256 + Q8KW_WARPS - 1) / Q8KW_WARPS, 1), 32 * Q8KW_WARPS>>>(x, 0, xf, FS_E);
    float *g, *u, *P;
    unsigned *cnt, *out;
    CK(cudaMalloc(&g, FS_F * 4));
    CK(cudaMalloc(&u, FS_F * 4));
    CK(cudaMalloc(&P, (size_t)FS_NG * FS_E * 4));
    CK(cudaMalloc(&cnt, 64 * 4));
    CK(cudaMemset(cnt, 0, 64 * 4));
    CK(cudaMalloc(&out, 1 << 20));
    CK(cudaDeviceSynchronize());
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    const int xn4 = xbytes(FS_E), xn14 = xbytes(FS_F);
    auto chain = [&]() {
        for (int l = 0; l < L; l++) {
            const Layer& y = ly[l];
            const int nrb = 2 * (FS_F / 16);
            launch_smem(s, mmv_multi, nrb, 128, xn4, (const uint8_t*)x, (i64)0, FS_E, (const uint8_t*)y.gate, (i64)gws, g, FS_F,
                        T_Q4_K, (const uint8_t*)y.up, (i64)gws, u, FS_F, T_Q4_K, (const uint8_t*)nullptr, (i64)0, (float*)nullptr, 0,
                        T_Q4_K);
            launch(s, swiglu_q8_k, dim3((FS_F / 256 + Q8KW_WARPS - 1) / Q8KW_WARPS, 1), 32 * Q8KW_WARPS, g, (const float*)g,
                   (const float*)u, FS_F, x14c, (i64)0, (uint16_t*)nullptr, (i64)0);
            const int drows = y.dtype == T_Q4_K ? 4 * Q4K_R1 : 4 * Q6K_R1;
            launch_smem(s, y.dtype == T_Q4_K ? mmv_q4_k_1 : mmv_q6_k_1, FS_E / drows, 128, xn14, (const uint8_t*)y.down,
                        (i64)rowbytes(y.dtype, FS_F), (const uint8_t*)x14c, (i64)0, y.dc, (i64)0, FS_E, FS_F, 1);
            if (gap) launch(s, kgap, 1, 32, out, gap);
        }
    };
    printf("%.2f GB of FFN weights in %d layers; gap %d ns, red %d, dfirst %d, cdims %d\n", bytes / 1e9, L, gap, red, dfirst, cdims);
    const Variant vars[] = {VAR(8, 2, 8), VAR(16, 4, 8), VAR(16, 2, 4), VAR(8, 4, 8), VAR(4, 2, 8), VAR(8, 2, 4), VAR(16, 4, 4)};
    const char* only = getenv("VAR");
    for (Variant v : vars) {
        if (only && !strstr(only, v.name)) continue;
        const int RA = 256 * v.gpc / v.cs;
        const int smem = 5248 + 3 * RA * 4 + xbytes(256 * v.gpc);
        if (cdims) v.q4 = v.q4cd, v.q6 = v.q6cd;
        for (auto k : {v.q4, v.q6}) {
            CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
            if (v.cs > 8) CK(cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        }
        int nreg = 0;
        cudaFuncAttributes fa;
        CK(cudaFuncGetAttributes(&fa, v.q6));
        nreg = fa.numRegs;
        const int grid = FS_NG / v.gpc * v.cs;
        auto fused = [&](bool check) {
            for (int l = 0; l < L; l++) {
                const Layer& y = ly[l];
                FsArgs a{y.gate, y.up, y.down, (i64)gws, (i64)rowbytes(y.dtype, FS_F), x, P, y.df, check ? x14f : nullptr, cnt, red, dfirst};
                launch_cl(s, y.dtype == T_Q4_K ? v.q4 : v.q6, grid, 32 * v.w, smem, cdims ? 1 : v.cs, a);
                if (gap) launch(s, kgap, 1, 32, out, gap);
            }
        };
        CK(cudaMemset(x14f, 0, xn14));
        chain();
        fused(true);
        CK(cudaStreamSynchronize(s));
        CK(cudaGetLastError());
        double worst = 0, amax = 0;
        size_t xdiff = 0;
        for (int l : {0, 1, L - 1}) {
            std::vector<float> A(FS_E), B(FS_E);
            CK(cudaMemcpy(A.data(), ly[l].dc, FS_E * 4, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(B.data(), ly[l].df, FS_E * 4, cudaMemcpyDeviceToHost));
            for (int j = 0; j < FS_E; j++) worst = fmax(worst, fabs((double)A[j] - B[j])), amax = fmax(amax, fabs((double)A[j]));
        }
        {
            std::vector<uint8_t> A(xn14), B(xn14);
            CK(cudaMemcpy(A.data(), x14c, xn14, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(B.data(), x14f, xn14, cudaMemcpyDeviceToHost));
            for (int j = 0; j < xn14; j++) xdiff += A[j] != B[j];
        }
        printf("%-16s grid %d, %d regs, smem %d: down max |diff| %.3g of max |out| %.3g (%.2g)%s; Q8_K SwiGLU bytes differing %zu%s\n",
               v.name, grid, nreg, smem, worst, amax, worst / amax, red == 1 ? " (RED=1 sums repeat, not compared)" : "", xdiff,
               xdiff ? "  WRONG" : "");
        for (int rr = 0; rr < 2; rr++) {
            const float tc = graph_best_ms(s, chain, 2, 5), tf = graph_best_ms(s, [&]() { fused(false); }, 2, 5);
            printf("  round %d: chain %.3f ms (%.2f TB/s, %.2f us a layer), fused %.3f ms (%.2f TB/s, %.2f us a layer)\n", rr, tc,
                   bytes / (tc * 1e-3) / 1e12, 1e3 * tc / L, tf, bytes / (tf * 1e-3) / 1e12, 1e3 * tf / L);
        }
    }
    return 0;
}
