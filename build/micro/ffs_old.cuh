// ffs_old.cuh: session 68 first ffs.cu kernel (commit 9db16de), for ffs2.cu to time beside the engine port.
#pragma once
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
__global__ void __launch_bounds__(32 * W) ffs(FsArgs a) {
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
