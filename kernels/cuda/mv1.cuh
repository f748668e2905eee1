// mv1.cuh: the Q4_K lane helpers of matmul.cu's mat-vecs, and its batch-1 products
// (mmv_*_1, mmv_id_*, mmv_multi) for Q4_K, Q6_K and Q8_0 (and, with mv1x.cuh, Q5_K, F16
// and BF16, and with mv1lo.cuh Q4_0, Q5_0, Q4_1, Q5_1, Q2_K and Q3_K, for mmv_*_1 and
// mmv_id_*): the activation row in shared memory, several weight rows a warp.
#pragma once
#include "common.cuh"

// ---- weight loads: the batch-1 products' rows, read once a step ----
// A decode step streams 1.5-5 GB of weights through the 50 MB L2, pushing out what the
// next kernels need again (activation rows, the KV cache, small tensors). ldw*<true>
// loads with an L2 evict-first policy, ldw*<false> is a plain load. mv1's EF, by
// EMBER_WEVICT: 1 (the default) for mmv_id and mmv_idw (mv1's ID: a mixture of experts'
// rows and per-head products, the bulk of DeepSeek-V2's step) and the dense kernels'
// _e forms (mmv_*_1e, mmv_multi*_e: the host takes them for models with routed
// experts, evict.go), 2 for every product of mv1, 0 for none. Measured in NOTES.md
// "Session 44" and "Session 47".
#ifndef EMBER_WEVICT
#define EMBER_WEVICT 1
#endif
// wev is EMBER_WEVICT's rule: whether a product (per-expert or per-head: id; a dense
// kernel's _e form: ef) loads its weights evict-first.
__host__ __device__ constexpr bool wev(bool id, bool ef = false) {
    return EMBER_WEVICT == 2 || (EMBER_WEVICT == 1 && (id || ef));
}
__device__ __forceinline__ uint64_t wpol() {
    uint64_t p;
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
    return p;
}
template <bool EF>
__device__ __forceinline__ uint4 ldw16(const uint8_t* a) {
    if constexpr (EF) {
        uint4 r;
        asm("ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
            : "l"(__cvta_generic_to_global(a)), "l"(wpol()));
        return r;
    } else {
        return *(const uint4*)a;
    }
}
template <bool EF>
__device__ __forceinline__ uint2 ldw8(const uint8_t* a) {
    if constexpr (EF) {
        uint2 r;
        asm("ld.global.L2::cache_hint.v2.u32 {%0, %1}, [%2], %3;" : "=r"(r.x), "=r"(r.y) : "l"(__cvta_generic_to_global(a)), "l"(wpol()));
        return r;
    } else {
        return *(const uint2*)a;
    }
}
template <bool EF>
__device__ __forceinline__ uint16_t ldw2(const uint8_t* a) {
    if constexpr (EF) {
        uint16_t r;
        asm("ld.global.L2::cache_hint.u16 %0, [%1], %2;" : "=h"(r) : "l"(__cvta_generic_to_global(a)), "l"(wpol()));
        return r;
    } else {
        return *(const uint16_t*)a;
    }
}
template <bool EF>
__device__ __forceinline__ int4 ldw16i(const uint8_t* a) {
    if constexpr (EF) {
        const uint4 u = ldw16<true>(a);
        return make_int4((int)u.x, (int)u.y, (int)u.z, (int)u.w);
    } else {
        return *(const int4*)a;
    }
}

// ---- Q4_K: 8 lanes per 144-byte block, each one 16-byte load of quants ----

// q4k_pair: the scales and mins of sub-blocks 2c and 2c+1 (getScaleMinK4) from the 12
// scale bytes in three words, two bytes at a time.
__device__ __forceinline__ void q4k_pair(int c, uint32_t s0, uint32_t s1, uint32_t s2, int* sc0, int* sc1, int* m0, int* m1) {
    uint32_t sc, m;
    if (c < 2) {
        const int sh = 16 * c;
        sc = (s0 >> sh) & 0x3f3f;
        m = (s1 >> sh) & 0x3f3f;
    } else {
        const int sh = 16 * (c - 2);
        const uint32_t a = s2 >> sh, lo = s0 >> sh, hi = s1 >> sh;
        sc = (a & 0x0f0f) | (((lo >> 6) & 0x0303) << 4);
        m = ((a >> 4) & 0x0f0f) | (((hi >> 6) & 0x0303) << 4);
    }
    *sc0 = sc & 0xff;
    *sc1 = (sc >> 8) & 0xff;
    *m0 = m & 0xff;
    *m1 = (m >> 8) & 0xff;
}

// q4k_dot: the integer sums of lane chunk c (0..3) of a block, which holds qs bytes
// [32c, 32c+32) in qa, qb: the quants of sub-blocks 2c (low nibbles, sum returned) and
// 2c+1 (high nibbles, sum in *sb), against the activation quants xs.
__device__ __forceinline__ int q4k_dot(const uint4 qa, const uint4 qb, const int* xs, int* sb) {
    const uint32_t w[8] = {qa.x, qa.y, qa.z, qa.w, qb.x, qb.y, qb.z, qb.w};
    int sa = 0, s2 = 0;
#pragma unroll
    for (int k = 0; k < 8; k++) {
        sa = __dp4a((int)(w[k] & 0x0f0f0f0f), xs[k], sa);
        s2 = __dp4a((int)((w[k] >> 4) & 0x0f0f0f0f), xs[8 + k], s2);
    }
    *sb = s2;
    return sa;
}

// q4k_part is the block's float formula of quant.Dot for the chunk's sums.
__device__ __forceinline__ float q4k_part(uint4 hdr, int c, int sa, int sb, float yd, int4 bs) {
    const float d = h2f(hdr.x & 0xffff), dmin = h2f(hdr.x >> 16);
    int sc0, m0, sc1, m1;
    q4k_pair(c, hdr.y, hdr.z, hdr.w, &sc0, &sc1, &m0, &m1);
    const int mins = m0 * (bs.x + bs.y) + m1 * (bs.z + bs.w);
    return d * yd * (float)(sc0 * sa + sc1 * sb) - dmin * yd * (float)mins;
}

// q4k_x loads what a Q4_K lane (chunk c of block ib) takes of the Q8_K activation row X of
// K elements: the 64 quants of its chunk (xs; swizzled in shared memory when sw), the
// block's scale yd and its chunk's four bsums.
__device__ __forceinline__ void q4k_x(const uint8_t* X, int K, int ib, int c, bool sw, int xs[16], float* yd, int4* bs) {
    const int4* xb = (const int4*)(X + 256 * ib + 64 * c);
    const int s = sw ? ((ib & 1) << 1) | (c >> 1) : 0;
    const int4 x0v = xb[0 ^ s], x1v = xb[1 ^ s], x2v = xb[2 ^ s], x3v = xb[3 ^ s];
    const int v[16] = {x0v.x, x0v.y, x0v.z, x0v.w, x1v.x, x1v.y, x1v.z, x1v.w,
                       x2v.x, x2v.y, x2v.z, x2v.w, x3v.x, x3v.y, x3v.z, x3v.w};
#pragma unroll
    for (int i = 0; i < 16; i++) xs[i] = v[i];
    *yd = ((const float*)(X + K))[ib];
    *bs = *(const int4*)(X + Q8K_BSUMS(K) + 64 * ib + 16 * c);
}

// Two weight rows per warp (Q4K_ROWS), four warps per block: 8 rows a block; each
// activation load serves both rows.
// ---- batch-1 products of Q4_K, Q6_K and Q8_0 (mmv_*_1, mmv_id_*, mmv_multi) ----
//
// The activation row is copied once per block into shared memory (cp.async, when the
// launch gives it the row's bytes of dynamic shared memory; else it is read from global
// memory), so that the global loads are weights only, and each warp takes several
// weight rows against each activation load: Q4_K 4, Q6_K 2, Q8_0 3 (mmv_id 2) rows a
// warp, four warps a block (mv1_rows, rowsPerBlock in matmul.go). Each warp loads the weights of
// its next blocks before it computes the current ones. The lanes take blocks as the
// NX > 1 kernels do, so the integer sums and the per-lane float formulas are theirs.
//
// Bank conflicts: a Q4_K lane reads 64 bytes of quants at 256ib + 64c and a Q6_K lane
// 16 bytes at 256ib + 128h + 16g + 32s, 16 bytes at a time; in shared memory the 16-byte
// chunk q of the quants is stored at q ^ (((q >> 3) & 3) << sh) (sh 0 for Q4_K, 1 for
// Q6_K), which spreads the eight lanes of each quarter warp over all 32 banks.

#define Q4K_R1 4
#define Q6K_R1 2
#ifndef Q5K_R1
#define Q5K_R1 2  // mv1x.cuh's
#endif
#ifndef HALF_R1
#define HALF_R1 2  // mv1x.cuh's F16 and BF16 rows
#endif
#ifndef Q23_R1
#define Q23_R1 2  // mv1lo.cuh's Q2_K and Q3_K rows
#endif
#define Q50_R1 4  // mv1lo.cuh's Q4_0, Q5_0, Q4_1 and Q5_1 rows
// Q8_0 rows a warp and steps in flight (mv1_q8_0): the batch-1 products of one matrix
// (mmv_q8_0_1, mmv_multi_q8_0) take Q80_R1 and Q80_S, the per-row matrices of mmv_id
// (a mixture of experts' rows) Q80_ID_R1 and Q80_ID_S. On the H200 (session 24, 8B Q8_0
// tg128, same calls): rows 2 / steps 4 (3 in flight) 362-369, 2 / 6 373-378, 3 / 6
// 378-382, 4 / 6 376, 1 / 6 367, 2 / 8 352; DeepSeek-V2-Lite's Q8_0 experts gained
// nothing measurable from 6 steps (NOTES.md). Each may be set by -D for trying others.
#ifndef Q80_R1
#define Q80_R1 3
#endif
#ifndef Q80_S
#define Q80_S 6
#endif
#ifndef Q80_ID_R1
#define Q80_ID_R1 2
#endif
#ifndef Q80_ID_S
#define Q80_ID_S 4
#endif

// mv1_rows is the weight rows a block of the batch-1 kernel of type T takes (mmv_id's
// Q8_0 blocks take 4 * Q80_ID_R1).
__device__ __forceinline__ int mv1_rows(int T) {
    return 4 * (T == T_Q4_K ? Q4K_R1 : T == T_Q6_K ? Q6K_R1 : T == T_Q4_0 || T == T_Q5_0 || T == T_Q4_1 || T == T_Q5_1 ? Q50_R1 : T == T_Q2_K || T == T_Q3_K ? Q23_R1 : Q80_R1);
}
// mv1_rows_q5 is mv1_rows for mmv_multi_q5_k's Q5_K and Q6_K (apart, so that mmv_multi's
// code stays as it was).
__device__ __forceinline__ int mv1_rows_q5(int T) { return 4 * (T == T_Q5_K ? Q5K_R1 : Q6K_R1); }

// mv1_bytes is the bytes of a quantized activation row of K elements for T's kernel.
__device__ __forceinline__ int mv1_bytes(int T, int K) {
    if (T == T_F16 || T == T_BF16) return (2 * K + 15) & ~15;
    if (T == T_Q4_1 || T == T_Q5_1) return (K + 8 * (K / 32) + 15) & ~15;  // Q8_1: d and s
    return ((T == T_Q8_0 || T == T_Q4_0 || T == T_Q5_0 ? K + 4 * (K / 32) : Q8K_BSUMS(K) + 4 * (K / 16)) + 15) & ~15;
}

__device__ __forceinline__ unsigned dyn_smem_size() {
    unsigned n;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(n));
    return n;
}

__device__ __forceinline__ int mv1_swz(int q, int sh) { return q ^ (((q >> 3) & 3) << sh); }

// mv1_stage starts the copies of activation row X (n bytes) into shared memory xs,
// quants swizzled by sh (negative: none); mv1_wait waits for them.
__device__ __forceinline__ void mv1_stage(uint8_t* xs, const uint8_t* X, int n, int K, int sh) {
    const unsigned base = (unsigned)__cvta_generic_to_shared(xs);
    for (int q = threadIdx.x; q < n / 16; q += blockDim.x) {
        const int p = sh >= 0 && q < K / 16 ? mv1_swz(q, sh) : q;
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(base + 16 * p), "l"(X + 16 * q) : "memory");
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}
__device__ __forceinline__ void mv1_wait() {
    asm volatile("cp.async.wait_all;" ::: "memory");
    __syncthreads();
}

// mv1_ready is called by every thread of a block after its first weight loads: it waits
// for the kernel before (pdl_wait; the activation row is its output), then with SM copies
// the row into shared memory xs and returns it, else returns the row in global memory.
template <bool SM>
__device__ __forceinline__ const uint8_t* mv1_ready(const uint8_t* Xg, uint8_t* xs, int n, int K, int sh) {
    pdl_wait();
    if (!SM) return Xg;
    mv1_stage(xs, Xg, n, K, sh);
    mv1_wait();
    return xs;
}

// mv1_store writes the warp's row sums acc[i] of rows r0 + i < M.
template <int R>
__device__ __forceinline__ void mv1_store(float* acc, float* D, int r0, int M) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int i = 0; i < R; i++) {
        const float s = warp_sum(acc[i]);
        if (lane == 0 && r0 + i < M) D[r0 + i] = s;
    }
}

// Q4_K: lane c = lane & 3 of block ib = lane / 4 (+ 8 per step), as mmv_q4_k.
template <bool SM, bool EF>
__device__ __forceinline__ void mv1_q4_k(const uint8_t* W, i64 ws, const uint8_t* Xg, uint8_t* xs, int n, float* D, int M, int K, int wr) {
    const int lane = threadIdx.x & 31, c = lane & 3, nb = K / 256;
    const int r0 = wr * Q4K_R1;
    const uint8_t* w[Q4K_R1];
#pragma unroll
    for (int i = 0; i < Q4K_R1; i++) w[i] = W + (i64)min(r0 + i, M - 1) * ws;
    uint4 h[Q4K_R1], qa[Q4K_R1], qb[Q4K_R1];
    int ib = lane >> 2;
    if (ib < nb) {
#pragma unroll
        for (int i = 0; i < Q4K_R1; i++) {
            const uint8_t* p = w[i] + 144 * ib;
            h[i] = ldw16<EF>(p), qa[i] = ldw16<EF>(p + 16 + 32 * c), qb[i] = ldw16<EF>(p + 32 + 32 * c);
        }
    }
    const uint8_t* X = mv1_ready<SM>(Xg, xs, n, K, 0);
    float acc[Q4K_R1];
#pragma unroll
    for (int i = 0; i < Q4K_R1; i++) acc[i] = 0;
    for (; ib < nb; ib += 8) {
        uint4 nh[Q4K_R1], na[Q4K_R1], nq[Q4K_R1];
        if (ib + 8 < nb) {
#pragma unroll
            for (int i = 0; i < Q4K_R1; i++) {
                const uint8_t* p = w[i] + 144 * (ib + 8);
                nh[i] = ldw16<EF>(p), na[i] = ldw16<EF>(p + 16 + 32 * c), nq[i] = ldw16<EF>(p + 32 + 32 * c);
            }
        }
        int xs[16];
        float yd;
        int4 bs;
        q4k_x(X, K, ib, c, SM, xs, &yd, &bs);
#pragma unroll
        for (int i = 0; i < Q4K_R1; i++) {
            int sb;
            const int sa = q4k_dot(qa[i], qb[i], xs, &sb);
            acc[i] += q4k_part(h[i], c, sa, sb, yd, bs);
            h[i] = nh[i], qa[i] = na[i], qb[i] = nq[i];
        }
    }
    mv1_store<Q4K_R1>(acc, D, r0, M);
}

// q6k_vals are the 6-bit quants (less 32) of a Q6_K lane's four 16-byte groups.
__device__ __forceinline__ void q6k_vals(uint4 qa, uint4 qb, uint4 qh, int v[4][4]) {
    const uint32_t A[4] = {qa.x, qa.y, qa.z, qa.w}, B[4] = {qb.x, qb.y, qb.z, qb.w}, H[4] = {qh.x, qh.y, qh.z, qh.w};
#pragma unroll
    for (int k = 0; k < 4; k++) {
        v[0][k] = __vsub4((A[k] & 0x0f0f0f0f) | ((H[k] & 0x03030303) << 4), 0x20202020);
        v[1][k] = __vsub4((B[k] & 0x0f0f0f0f) | (((H[k] >> 2) & 0x03030303) << 4), 0x20202020);
        v[2][k] = __vsub4(((A[k] >> 4) & 0x0f0f0f0f) | (((H[k] >> 4) & 0x03030303) << 4), 0x20202020);
        v[3][k] = __vsub4(((B[k] >> 4) & 0x0f0f0f0f) | (((H[k] >> 6) & 0x03030303) << 4), 0x20202020);
    }
}

// q6k_part is a Q6_K lane's term of its row's dot: its four 16-byte groups of quants
// (qa, qb, qh; sub-block scales sc, half g) against the activation's xv, times d and yd.
__device__ __forceinline__ float q6k_part(uint4 qa, uint4 qb, uint4 qh, uint2 sc, uint16_t dw, const int4 xv[4], int g, float yd) {
    int v[4][4], sum[4];
    q6k_vals(qa, qb, qh, v);
#pragma unroll
    for (int s = 0; s < 4; s++)
        sum[s] = __dp4a(v[s][0], xv[s].x, __dp4a(v[s][1], xv[s].y, __dp4a(v[s][2], xv[s].z, __dp4a(v[s][3], xv[s].w, 0))));
    const int s0 = (int8_t)(sc.x >> (8 * g)), s1 = (int8_t)(sc.x >> (8 * g + 16));
    const int s2 = (int8_t)(sc.y >> (8 * g)), s3 = (int8_t)(sc.y >> (8 * g + 16));
    const float d = h2f(dw);
    return d * yd * (float)(s0 * sum[0] + s1 * sum[1] + s2 * sum[2] + s3 * sum[3]);
}

// q6k_x loads what a Q6_K lane (half h, group g of block ib) takes of the Q8_K activation
// row X of K elements: its four 16-byte chunks of quants (xv; swizzled in shared memory
// by 1 when SM) and the block's scale, returned.
template <bool SM>
__device__ __forceinline__ float q6k_x(const uint8_t* X, int K, int ib, int h, int g, int4 xv[4]) {
    const uint8_t* xb = X + 256 * ib + 128 * h + 16 * g;
    const int sw = SM ? ((ib & 1) << 1) | h : 0;
#pragma unroll
    for (int s = 0; s < 4; s++) xv[s] = *(const int4*)(xb + 32 * (s ^ sw));
    return ((const float*)(X + K))[ib];
}

// Q6_K: lane t = lane & 3 (h = t / 2, g = t % 2) of block ib = lane / 4 (+ 8 per step),
// as mmv_q6_k; the four scales come in one 8-byte load.
template <bool SM, bool EF>
__device__ __forceinline__ void mv1_q6_k(const uint8_t* W, i64 ws, const uint8_t* Xg, uint8_t* xs, int n, float* D, int M, int K, int wr) {
    const int lane = threadIdx.x & 31, t = lane & 3, h = t >> 1, g = t & 1, nb = K / 256;
    const int r0 = wr * Q6K_R1;
    const uint8_t* w[Q6K_R1];
#pragma unroll
    for (int i = 0; i < Q6K_R1; i++) w[i] = W + (i64)min(r0 + i, M - 1) * ws;
    uint4 qa[Q6K_R1], qb[Q6K_R1], qh[Q6K_R1];
    uint2 sc[Q6K_R1];
    uint16_t dw[Q6K_R1];
    int ib = lane >> 2;
#define Q6K_LOAD(QA, QB, QH, SC, DW, IB)                                                   \
    _Pragma("unroll") for (int i = 0; i < Q6K_R1; i++) {                                  \
        const uint8_t* ql = w[i] + 128 * (IB) + 64 * h + 16 * g;                          \
        QA[i] = ldw16<EF>(ql), QB[i] = ldw16<EF>(ql + 32);                                          \
        QH[i] = ldw16<EF>(w[i] + 128 * nb + 64 * (IB) + 32 * h + 16 * g);                      \
        SC[i] = ldw8<EF>(w[i] + 192 * nb + 16 * (IB) + 8 * h);                                 \
        DW[i] = ldw2<EF>(w[i] + 208 * nb + 2 * (IB));                                          \
    }
    if (ib < nb) { Q6K_LOAD(qa, qb, qh, sc, dw, ib) }
    const uint8_t* X = mv1_ready<SM>(Xg, xs, n, K, 1);
    float acc[Q6K_R1];
#pragma unroll
    for (int i = 0; i < Q6K_R1; i++) acc[i] = 0;
    for (; ib < nb; ib += 8) {
        uint4 na[Q6K_R1], nq[Q6K_R1], nh[Q6K_R1];
        uint2 nsc[Q6K_R1];
        uint16_t ndw[Q6K_R1];
        if (ib + 8 < nb) { Q6K_LOAD(na, nq, nh, nsc, ndw, ib + 8) }
        int4 xv[4];
        const float yd = q6k_x<SM>(X, K, ib, h, g, xv);
#pragma unroll
        for (int i = 0; i < Q6K_R1; i++) {
            acc[i] += q6k_part(qa[i], qb[i], qh[i], sc[i], dw[i], xv, g, yd);
            qa[i] = na[i], qb[i] = nq[i], qh[i] = nh[i], sc[i] = nsc[i], dw[i] = ndw[i];
        }
    }
#undef Q6K_LOAD
    mv1_store<Q6K_R1>(acc, D, r0, M);
}

// q8_pair_acc adds to acc a lane pair's block term, one lane of the pair holding the 4
// dp4a words w of half a block and its activation words xv: the pair's integer sum times
// the block's scales (the weights' f16 dw, the activation's dx), on the even lane, where
// the block is real (take). mv1_pair's and mvs_q8_0's step.
__device__ __forceinline__ void q8_pair_acc(float& acc, int4 w, int4 xv, bool take, int half, uint16_t dw, float dx) {
    int sm = __dp4a(w.x, xv.x, __dp4a(w.y, xv.y, __dp4a(w.z, xv.z, __dp4a(w.w, xv.w, 0))));
    sm += __shfl_xor_sync(0xffffffffu, sm, 1);
    if (take && half == 0) acc += (float)sm * (h2f(dw) * dx);
}

// mv1_pair: lane pair lane / 2 takes block ib0 + lane / 2 (ib0 += 16 per step), half the
// block's 32 values a lane, as mmv_q8_0, R rows a warp, with the weights of the next S - 1
// steps in flight while a step is computed. P, the row layout, says what a lane loads
// (P::raw, by P::load) and the block's f16 scale (P::scale), and makes the dp4a words
// (P::words): q8_0_pair (Q8_0 rows) and q5p_pair (packed Q5_0 rows, below).
template <class P, bool SM, int R, int S, bool EF>
__device__ __forceinline__ void mv1_pair(const uint8_t* W, i64 ws, const uint8_t* Xg, uint8_t* xs, int n, float* D, int M, int K, int wr) {
    using raw = typename P::raw;
    const int lane = threadIdx.x & 31, half = lane & 1, nb = K / 32;
    const int r0 = wr * R;
    const int nj = (nb + 15) / 16;
    const uint8_t* w[R];
#pragma unroll
    for (int i = 0; i < R; i++) w[i] = W + (i64)min(r0 + i, M - 1) * ws;
    raw q[S][R];
    uint16_t dw[S][R];
    // Every lane runs the same steps so that the pair shuffle is legal; a lane past the
    // last block loads the last one again and adds nothing.
    auto load = [&](int j, raw (&Q)[R], uint16_t (&DW)[R]) {
        if (j >= nj) return;
        const int ib = min(16 * j + (lane >> 1), nb - 1);
#pragma unroll
        for (int i = 0; i < R; i++) Q[i] = P::template load<EF>(w[i], ib, half, nb), DW[i] = P::template scale<EF>(w[i], ib, nb);
    };
#pragma unroll
    for (int s = 0; s < S - 1; s++) load(s, q[s], dw[s]);
    const uint8_t* X = mv1_ready<SM>(Xg, xs, n, K, -1);
    float acc[R];
#pragma unroll
    for (int i = 0; i < R; i++) acc[i] = 0;
    for (int j0 = 0; j0 < nj; j0 += S) {
#pragma unroll
        for (int s = 0; s < S; s++) {
            const int j = j0 + s, f = (s + S - 1) % S;
            load(j + S - 1, q[f], dw[f]);
            if (j >= nj) break;  // warp-uniform
            const bool ok = 16 * j + (lane >> 1) < nb;
            const int ib = min(16 * j + (lane >> 1), nb - 1);
            const int4 xv = *(const int4*)(X + 32 * ib + 16 * half);
            const float dx = ((const float*)(X + K))[ib];
#pragma unroll
            for (int i = 0; i < R; i++) q8_pair_acc(acc[i], P::words(q[s][i]), xv, ok, half, dw[s][i], dx);
        }
    }
    mv1_store<R>(acc, D, r0, M);
}

// q8_0_pair: Q8_0 rows (quants, then the f16 scales): a lane's 16 quants are its words.
struct q8_0_pair {
    using raw = int4;
    template <bool EF>
    static __device__ __forceinline__ int4 load(const uint8_t* w, int ib, int half, int nb) { return ldw16i<EF>(w + 32 * ib + 16 * half); }
    template <bool EF>
    static __device__ __forceinline__ uint16_t scale(const uint8_t* w, int ib, int nb) { return ldw2<EF>(w + 32 * nb + 2 * ib); }
    static __device__ __forceinline__ int4 words(int4 q) { return q; }
};

// mv1_q8_0: R rows of Q8_0, S steps (mv1_pair).
template <bool SM, int R, int S, bool EF>
__device__ __forceinline__ void mv1_q8_0(const uint8_t* W, i64 ws, const uint8_t* Xg, uint8_t* xs, int n, float* D, int M, int K, int wr) {
    mv1_pair<q8_0_pair, SM, R, S, EF>(W, ws, Xg, xs, n, D, M, K, wr);
}

// ---- packed Q5_0 (q5p): a widened Q5_0 weight's copy at 22 bytes a block ----
// A row of nb blocks: 16 bytes of nibbles a block (half h's 8 at 8 h: byte k of its first
// word holds values k and k + 4 of the half, of its second 8 + k and 12 + k), then 4
// bytes of high bits a block (bit i: value i), then the f16 scales (q5p_pack writes it
// from the widened Q8_0 rows). q5p_word is four int8 values of a half: nibbles n (one a
// byte) with their high bits b: n | 0xF0 (the value minus 16) where the bit is clear,
// n where it is set (widenQ5Block's q5Fill, by a multiply that spreads bit i to byte i).
__device__ __forceinline__ int q5p_word(uint32_t n, uint32_t b) {
    const uint32_t s = (b * 0x00204081u) & 0x01010101u;
    return (int)(n | ((s ^ 0x01010101u) * 0xF0u));
}

// q5p_pair: q5p rows. A lane loads 8 bytes of nibbles and its half's 16 high bits and
// builds the dp4a words mv1_q8_0 would load from the widened rows, so the integer block
// sums and every rounding are mmv_id_q8_0's over those rows: its bits.
struct q5p_pair {
    struct raw {
        uint2 q;
        uint16_t h;
    };
    template <bool EF>
    static __device__ __forceinline__ raw load(const uint8_t* w, int ib, int half, int nb) {
        return raw{ldw8<EF>(w + 16 * ib + 8 * half), ldw2<EF>(w + 16 * nb + 4 * ib + 2 * half)};
    }
    template <bool EF>
    static __device__ __forceinline__ uint16_t scale(const uint8_t* w, int ib, int nb) { return ldw2<EF>(w + 20 * nb + 2 * ib); }
    static __device__ __forceinline__ int4 words(raw r) {
        const uint32_t a = r.q.x, b = r.q.y, h = r.h;
        return make_int4(q5p_word(a & 0x0F0F0F0Fu, h & 15), q5p_word(a >> 4 & 0x0F0F0F0Fu, h >> 4 & 15),
                         q5p_word(b & 0x0F0F0F0Fu, h >> 8 & 15), q5p_word(b >> 4 & 0x0F0F0F0Fu, h >> 12));
    }
};

// mv1_q5p: R rows of q5p, S steps (mv1_pair).
template <bool SM, int R, int S, bool EF>
__device__ __forceinline__ void mv1_q5p(const uint8_t* W, i64 ws, const uint8_t* Xg, uint8_t* xs, int n, float* D, int M, int K, int wr) {
    mv1_pair<q5p_pair, SM, R, S, EF>(W, ws, Xg, xs, n, D, M, K, wr);
}

#include "mv1x.cuh"
#include "mv1lo.cuh"

// mv1 is the batch-1 product of type T: row block rb of D[r] = dot(W[r, :], X). With
// PRE (a kernel opened by pdl_defer) the first weight loads come before pdl_wait; with
// ID (mmv_id) Q8_0 rows take Q80_ID_R1 and Q80_ID_S and the 32-value types one step in
// flight (mv1lo.cuh's LO50_D); EF0 asks for evict-first loads
// (wev) in a dense product.
template <int T, bool PRE, bool ID = false, bool EF0 = false>
__device__ __forceinline__ void mv1(const uint8_t* W, i64 ws, const uint8_t* X, float* D, int M, int K, int rb) {
    constexpr int QR = ID ? Q80_ID_R1 : Q80_R1, QS = ID ? Q80_ID_S : Q80_S;
    constexpr bool EF = wev(ID, EF0);
    extern __shared__ __align__(16) uint8_t mv1_x[];
    if (!PRE) pdl_wait();
    const int n = mv1_bytes(T, K);
    const int wr = rb * 4 + (int)(threadIdx.x >> 5);  // the warp's group of rows
    if constexpr (T == T_Q2_K || T == T_Q3_K || T == T_Q4_0 || T == T_Q5_0 || T == T_Q4_1 || T == T_Q5_1) {
        // mv1lo.cuh's: the block's staged weights, shared by the kernel's forms and types
        const bool sm = dyn_smem_size() >= (unsigned)n;
        if constexpr (T == T_Q2_K || T == T_Q3_K) {
            if (sm) mv1_q23_k<T, true, EF>(W, ws, X, mv1_x, n, D, M, K, wr, lo_smem23());
            else mv1_q23_k<T, false, EF>(W, ws, X, mv1_x, n, D, M, K, wr, lo_smem23());
        } else {
            constexpr int LD = ID ? 1 : LO50_D;
            if (sm) mv1_q4q5<T, true, EF, LD>(W, ws, X, mv1_x, n, D, M, K, wr, lo_smem50());
            else mv1_q4q5<T, false, EF, LD>(W, ws, X, mv1_x, n, D, M, K, wr, lo_smem50());
        }
        return;
    }
    if (dyn_smem_size() >= (unsigned)n) {
        if (T == T_Q4_K) mv1_q4_k<true, EF>(W, ws, X, mv1_x, n, D, M, K, wr);
        else if (T == T_Q6_K) mv1_q6_k<true, EF>(W, ws, X, mv1_x, n, D, M, K, wr);
        else if (T == T_Q5_K) mv1_q5_k<true, EF>(W, ws, X, mv1_x, n, D, M, K, wr);
        else if (T == T_F16 || T == T_BF16) mv1_half<T == T_BF16, true, EF>(W, ws, X, mv1_x, n, D, M, K, wr);
        else mv1_q8_0<true, QR, QS, EF>(W, ws, X, mv1_x, n, D, M, K, wr);
    } else {
        if (T == T_Q4_K) mv1_q4_k<false, EF>(W, ws, X, mv1_x, n, D, M, K, wr);
        else if (T == T_Q6_K) mv1_q6_k<false, EF>(W, ws, X, mv1_x, n, D, M, K, wr);
        else if (T == T_Q5_K) mv1_q5_k<false, EF>(W, ws, X, mv1_x, n, D, M, K, wr);
        else if (T == T_F16 || T == T_BF16) mv1_half<T == T_BF16, false, EF>(W, ws, X, mv1_x, n, D, M, K, wr);
        else mv1_q8_0<false, QR, QS, EF>(W, ws, X, mv1_x, n, D, M, K, wr);
    }
}
