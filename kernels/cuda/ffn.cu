// ffn.cu: one decode row's feed-forward half (gate and up, SwiGLU, down) in one launch,
// split along the hidden width so that no block waits for another's gate/up rows
// (build/micro/ffs.cu measured the forms; NOTES.md, session 68).
//
// The chain it replaces: mmv_multi (gate and up, Q4_K, F rows of E), swiglu_q8_k
// (SwiGLU, then the Q8_K rounding of the F values), mmv_q4_k_1 or mmv_q6_k_1 (down, E
// rows of F). Down's first step needs gate/up rows from every block: a whole-grid
// dependency and a launch between the two products. Here the hidden width is cut into
// Q8_K blocks of 256 values; a cluster of FFN_CS blocks owns FFN_GPC of them (512
// values). Block r of the cluster computes its 512 / FFN_CS gate and up rows (mv1's
// lanes and formulas, so the same sums as mmv_multi), their SwiGLU (swiglu_q8_k's
// operations), and after a cluster barrier reads the cluster's SwiGLU values from its
// peers' shared memory and rounds them to Q8_K itself (q8k_quant_warp: swiglu_q8_k's
// bytes). Then it computes down's rows [E r / CS, E (r + 1) / CS) over the cluster's
// 512 columns only, a partial sum a row (a column block's four lane terms, then the
// two blocks in order) into P[cluster][row]; the last block of each rank to arrive (a
// counter a rank, left at zero) adds the clusters' partials in cluster order into dst.
// Down's sums are therefore in another order than mmv_*_1's (the same terms); the
// gate and up rows, the SwiGLU values and their Q8_K row are mmv_multi's and
// swiglu_q8_k's, bit for bit, and are written where those kernels write them.
//
// Grid: F / 512 clusters of FFN_CS blocks of 256 threads; E a multiple of 256 (and
// of 32 * FFN_CS), F of 512. Dynamic shared memory: ffn_smem(E) bytes.
#include "mv1.cuh"

#define FFN_CS 8   // blocks a cluster
#define FFN_GPC 2  // Q8_K blocks (of 256 hidden values) a cluster
#define FFN_W 8    // warps a block
#define FFN_RA (256 * FFN_GPC / FFN_CS)  // a block's hidden values (64)
#define FFN_XQ (256 * FFN_GPC)           // the cluster's hidden values (512)

// ffn_stage is the dynamic shared memory's first part: the input row (Q8_K of E) while
// gate and up run, the sum's scratch (FFN_W * 32 float4) after.
__host__ __device__ constexpr int ffn_stage(int E) {
    return ((E + ((4 * (E / 256) + 15) & ~15) + 4 * (E / 16) + 15) & ~15) > 16 * 32 * FFN_W
               ? ((E + ((4 * (E / 256) + 15) & ~15) + 4 * (E / 16) + 15) & ~15)
               : 16 * 32 * FFN_W;
}

// FfnArgs: xq the Q8_K input row (E values); gate and up Q4_K [F][E] (gws bytes a row),
// g and u their outputs (F each); sw SwiGLU's f32 output (may be g), x14 its Q8_K row
// (F); down Q4_K or Q6_K (mv1's layout) [E][F] (dws bytes a row), dst its output (E);
// P the partials (F / 512 rows of E), cnt FFN_CS counters (zero before and after).
#define FFN_ARGS                                                                                                            \
    const uint8_t *xq, int E, const uint8_t *gate, const uint8_t *up, i64 gws, float *g, float *u, int F, float *sw, \
        uint8_t *x14, const uint8_t *down, i64 dws, float *dst, float *P, unsigned *cnt

// ffn_gu: the block's gate and up rows i0 .. i0 + RA - 1 as tasks of Q4K_R1 rows (gate's
// tasks, then up's), warp w taking w, w + FFN_W, ...; a task's row in steps of eight
// blocks (a lane: chunk lane % 4 of block lane / 4 + 8 s), the next step's weights
// loaded before the current one is summed, across tasks too. The first step's loads
// come before the PDL wait (weights only), then the row is staged.
__device__ __forceinline__ void ffn_gu(const uint8_t* xq, int E, const uint8_t* gate, const uint8_t* up, i64 gws, int i0, uint8_t* xs,
                                       float* gs, float* us) {
    constexpr int NT = 2 * FFN_RA / Q4K_R1;
    const int lane = threadIdx.x & 31, c = lane & 3, nb = E / 256, ns = (nb + 7) / 8;
    auto rowp = [&](int task, int i) -> const uint8_t* {
        const bool isup = task >= NT / 2;
        return (isup ? up : gate) + (i64)(i0 + (isup ? task - NT / 2 : task) * Q4K_R1 + i) * gws;
    };
    uint4 h[Q4K_R1], qa[Q4K_R1], qb[Q4K_R1];
    int task = threadIdx.x >> 5, s = 0;
    if (task < NT && (lane >> 2) < nb) {
#pragma unroll
        for (int i = 0; i < Q4K_R1; i++) {
            const uint8_t* p = rowp(task, i) + 144 * (lane >> 2);
            h[i] = ldw16<false>(p), qa[i] = ldw16<false>(p + 16 + 32 * c), qb[i] = ldw16<false>(p + 32 + 32 * c);
        }
    }
    pdl_wait();
    mv1_stage(xs, xq, mv1_bytes(T_Q4_K, E), E, 0);
    mv1_wait();
    float acc[Q4K_R1] = {};
    while (task < NT) {
        const int ntask = s + 1 == ns ? task + FFN_W : task, nstep = s + 1 == ns ? 0 : s + 1;
        const int ib = (lane >> 2) + 8 * s, nib = (lane >> 2) + 8 * nstep;
        uint4 nh[Q4K_R1], na[Q4K_R1], nq[Q4K_R1];
        if (ntask < NT && nib < nb) {
#pragma unroll
            for (int i = 0; i < Q4K_R1; i++) {
                const uint8_t* p = rowp(ntask, i) + 144 * nib;
                nh[i] = ldw16<false>(p), na[i] = ldw16<false>(p + 16 + 32 * c), nq[i] = ldw16<false>(p + 32 + 32 * c);
            }
        }
        if (ib < nb) {
            int xv[16];
            float yd;
            int4 bs;
            q4k_x(xs, E, ib, c, true, xv, &yd, &bs);
#pragma unroll
            for (int i = 0; i < Q4K_R1; i++) {
                int sb;
                const int sa = q4k_dot(qa[i], qb[i], xv, &sb);
                acc[i] += q4k_part(h[i], c, sa, sb, yd, bs);
            }
        }
#pragma unroll
        for (int i = 0; i < Q4K_R1; i++) h[i] = nh[i], qa[i] = na[i], qb[i] = nq[i];
        if (s + 1 == ns) {
            const bool isup = task >= NT / 2;
            float* o = isup ? us : gs;
            const int r0 = (isup ? task - NT / 2 : task) * Q4K_R1;
#pragma unroll
            for (int i = 0; i < Q4K_R1; i++) {
                const float v = warp_sum(acc[i]);
                if (lane == 0) o[r0 + i] = v;
                acc[i] = 0;
            }
        }
        task = ntask, s = nstep;
    }
}

// A lane's weights of one row's block of down (Q4_K: header, two quant chunks; Q6_K:
// ql, ql + 32, qh, the scales, d in mv1's planar layout of nb blocks a row).
struct FfnWt {
    uint4 a, b, c;
    uint2 sc;
    uint16_t dw;
};
template <int DT>
__device__ __forceinline__ void ffn_dload(const uint8_t* row, int nb, int ib, FfnWt& w) {
    const int t = threadIdx.x & 3, hh = t >> 1, g = t & 1;
    if (DT == T_Q4_K) {
        const uint8_t* p = row + 144 * ib;
        w.a = ldw16<false>(p), w.b = ldw16<false>(p + 16 + 32 * t), w.c = ldw16<false>(p + 32 + 32 * t);
    } else {
        const uint8_t* ql = row + 128 * ib + 64 * hh + 16 * g;
        w.a = ldw16<false>(ql), w.b = ldw16<false>(ql + 32);
        w.c = ldw16<false>(row + 128 * nb + 64 * ib + 32 * hh + 16 * g);
        w.sc = ldw8<false>(row + 192 * nb + 16 * ib + 8 * hh);
        w.dw = ldw2<false>(row + 208 * nb + 2 * ib);
    }
}
// ffn_dterm is the lane's term of a row's block jj of the cluster against X (the
// cluster's Q8_K row of FFN_XQ values), mv1's formulas.
template <int DT>
__device__ __forceinline__ float ffn_dterm(const FfnWt& w, int jj, const uint8_t* X) {
    const int t = threadIdx.x & 3, hh = t >> 1, g = t & 1;
    if (DT == T_Q4_K) {
        const int4* xb = (const int4*)(X + 256 * jj + 64 * t);
        int xv[16];
#pragma unroll
        for (int q = 0; q < 4; q++) {
            const int4 v = xb[q];
            xv[4 * q] = v.x, xv[4 * q + 1] = v.y, xv[4 * q + 2] = v.z, xv[4 * q + 3] = v.w;
        }
        const float yd = ((const float*)(X + FFN_XQ))[jj];
        const int4 bs = *(const int4*)(X + Q8K_BSUMS(FFN_XQ) + 64 * jj + 16 * t);
        int sb;
        const int sa = q4k_dot(w.b, w.c, xv, &sb);
        return q4k_part(w.a, t, sa, sb, yd, bs);
    } else {
        const uint8_t* xb = X + 256 * jj + 128 * hh + 16 * g;
        int4 xv[4];
#pragma unroll
        for (int q = 0; q < 4; q++) xv[q] = *(const int4*)(xb + 32 * q);
        return q6k_part(w.a, w.b, w.c, w.sc, w.dw, xv, g, ((const float*)(X + FFN_XQ))[jj]);
    }
}

// ffn_down: down's rows [lo, hi) over the cluster's columns j0, j0 + 1, eight rows a warp
// step (lane / 4 the row, lane % 4 mv1's lane of the block), the next step's weights
// loaded before the current one is summed (cur: the first step's, loaded by the caller
// before the cluster's barriers); each row's partial goes to P.
template <int DT>
__device__ __forceinline__ void ffn_dfirst(const uint8_t* down, i64 dws, int nb, int lo, int hi, int j0, FfnWt (&cur)[FFN_GPC]) {
    const int r = lo + 8 * (threadIdx.x >> 5) + ((threadIdx.x & 31) >> 2);
    if (r - ((threadIdx.x & 31) >> 2) < hi) {
#pragma unroll
        for (int jj = 0; jj < FFN_GPC; jj++) ffn_dload<DT>(down + (i64)min(r, hi - 1) * dws, nb, j0 + jj, cur[jj]);
    }
}
template <int DT>
__device__ __forceinline__ void ffn_down(const uint8_t* down, i64 dws, int nb, int lo, int hi, int j0, const uint8_t* X, float* P,
                                         FfnWt (&cur)[FFN_GPC]) {
    const int lane = threadIdx.x & 31;
    for (int r = lo + 8 * (threadIdx.x >> 5) + (lane >> 2); r - (lane >> 2) < hi; r += 8 * FFN_W) {
        const int rn = r + 8 * FFN_W;
        FfnWt nx[FFN_GPC];
        if (rn - (lane >> 2) < hi) {
#pragma unroll
            for (int jj = 0; jj < FFN_GPC; jj++) ffn_dload<DT>(down + (i64)min(rn, hi - 1) * dws, nb, j0 + jj, nx[jj]);
        }
        float s = 0;
#pragma unroll
        for (int jj = 0; jj < FFN_GPC; jj++) {
            float v = ffn_dterm<DT>(cur[jj], jj, X);
            v += __shfl_xor_sync(0xffffffffu, v, 1);
            v += __shfl_xor_sync(0xffffffffu, v, 2);
            s += v;
        }
        if ((lane & 3) == 0 && r < hi) P[r] = s;
#pragma unroll
        for (int jj = 0; jj < FFN_GPC; jj++) cur[jj] = nx[jj];
    }
}

// ffn_sum: dst's rows [lo, hi) as the sum of the ncl clusters' partials in cluster
// order. The rows' float4s are f4 = (hi - lo) / 4; when the block's threads are at
// least twice that, S = threads / f4 threads take a float4 each, thread p of them the
// clusters [p ncl / S, (p + 1) ncl / S) (sixteen loads in flight at a time), and their S
// sums are added in p's order from shared memory (sm: S * f4 float4s): a fixed order.
__device__ __forceinline__ void ffn_sum(const float* P, int E, int ncl, float* dst, int lo, int hi, float4* sm) {
    const int f4 = (hi - lo) / 4, T = 32 * FFN_W, S = T >= 2 * f4 ? T / f4 : 1;
    const int q = threadIdx.x % f4, p = threadIdx.x / f4;
    float4 t = make_float4(0, 0, 0, 0);
    if (p < S) {
        const int c0 = p * ncl / S, c1 = (p + 1) * ncl / S;
        for (int q0 = q; q0 < f4; q0 += T) {  // S > 1: one pass
            bool first = true;
            for (int c = c0; c < c1; c += 16) {
                float4 v[16];
#pragma unroll
                for (int k = 0; k < 16; k++)
                    if (c + k < c1) v[k] = __ldcg((const float4*)(P + (i64)(c + k) * E + lo) + q0);
#pragma unroll
                for (int k = 0; k < 16; k++) {
                    if (c + k >= c1) break;
                    if (first) t = v[k], first = false;
                    else t.x += v[k].x, t.y += v[k].y, t.z += v[k].z, t.w += v[k].w;
                }
            }
            if (S == 1) *((float4*)(dst + lo) + q0) = t;
        }
    }
    if (S == 1) return;
    if (p < S) sm[p * f4 + q] = t;
    __syncthreads();
    if (p == 0) {
        for (int k = 1; k < S; k++) {
            const float4 v = sm[k * f4 + q];
            t.x += v.x, t.y += v.y, t.z += v.z, t.w += v.w;
        }
        *((float4*)(dst + lo) + q) = t;
    }
}

template <int DT>
__device__ __forceinline__ void ffn(FFN_ARGS) {
    extern __shared__ __align__(16) uint8_t ffn_sm[];
    const int st = ffn_stage(E);
    uint8_t* xs = ffn_sm;                    // the input row, then ffn_sum's scratch
    float* gs = (float*)(ffn_sm + st);      // FFN_RA gate sums
    float* us = gs + FFN_RA;                 // FFN_RA up sums
    float* vs = us + FFN_RA;                 // FFN_RA SwiGLU values
    uint8_t* xc = (uint8_t*)(vs + FFN_RA);  // the cluster's Q8_K row (FFN_XQ values)
    __shared__ int last;
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    const int cl = blockIdx.x / FFN_CS, lane = threadIdx.x & 31, wp = threadIdx.x >> 5, nb = F / 256;
    const int i0 = FFN_XQ * cl + FFN_RA * (int)r;  // the block's first hidden value
    ffn_gu(xq, E, gate, up, gws, i0, xs, gs, us);
    const int lo = E * (int)r / FFN_CS, hi = E * ((int)r + 1) / FFN_CS;
    FfnWt cur[FFN_GPC];
    ffn_dfirst<DT>(down, dws, nb, lo, hi, FFN_GPC * cl, cur);  // weights: before the barriers
    __syncthreads();
    for (int i = threadIdx.x; i < FFN_RA; i += 32 * FFN_W) {
        const float gv = gs[i], uv = us[i];
        const float e = (float)exp(-(double)gv);
        const float v = gv / (1.0f + e) * uv;
        vs[i] = v;
        g[i0 + i] = gv, u[i0 + i] = uv, sw[i0 + i] = v;  // (sw may be g: the same thread, in order)
    }
    cluster_sync();
    if (wp < FFN_GPC) {  // warp q rounds the cluster's block q (every block of it does: the same bytes)
        const int k = 256 * wp + 8 * lane, pr = k / FFN_RA, off = k % FFN_RA;
        float v[8];
#pragma unroll
        for (int i = 0; i < 8; i++) v[i] = cluster_ld(vs + off + i, pr);
        q8k_quant_warp(v, xc, wp, FFN_XQ);
        if (r == 0) {  // swiglu_q8_k's row: the cluster's blocks of it
            const int ib = FFN_GPC * cl + wp;
            *(uint2*)(x14 + 256 * ib + 8 * lane) = *(const uint2*)(xc + 256 * wp + 8 * lane);
            if ((lane & 1) == 0) ((int*)(x14 + Q8K_BSUMS(F)))[16 * ib + lane / 2] = ((const int*)(xc + Q8K_BSUMS(FFN_XQ)))[16 * wp + lane / 2];
            if (lane == 0) ((float*)(x14 + F))[ib] = ((const float*)(xc + FFN_XQ))[wp];
        }
    }
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");  // the peers may leave once all have read vs
    __syncthreads();
    const int ncl = F / FFN_XQ;
    ffn_down<DT>(down, dws, nb, lo, hi, FFN_GPC * cl, xc, P + (i64)cl * E, cur);
    __syncthreads();
    if (threadIdx.x == 0) {  // the block's partials before its count (CUTLASS's GenericBarrier order)
        unsigned old;
        asm volatile("fence.acq_rel.gpu;" ::: "memory");
        asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(cnt + r) : "memory");
        last = old + 1 == (unsigned)ncl;
        if (last) asm volatile("fence.acq_rel.gpu;" ::: "memory");
    }
    __syncthreads();
    if (last) {
        ffn_sum(P, E, ncl, dst, lo, hi, (float4*)xs);
        if (threadIdx.x == 0) cnt[r] = 0;
    }
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

extern "C" __global__ void __cluster_dims__(FFN_CS, 1, 1) __launch_bounds__(32 * FFN_W, 2) ffn_q4_k(FFN_ARGS) {
    pdl_defer();
    ffn<T_Q4_K>(xq, E, gate, up, gws, g, u, F, sw, x14, down, dws, dst, P, cnt);
}
extern "C" __global__ void __cluster_dims__(FFN_CS, 1, 1) __launch_bounds__(32 * FFN_W, 2) ffn_q6_k(FFN_ARGS) {
    pdl_defer();
    ffn<T_Q6_K>(xq, E, gate, up, gws, g, u, F, sw, x14, down, dws, dst, P, cnt);
}
