// mv1x.cuh: mv1's batch-1 products of Q5_K and of F16 and BF16 rows (included by mv1.cuh
// before mv1, whose helpers they use). Until session 48 these types took mmv_generic: a
// lane a Q5_K block with byte loads, a block a half row with 2-byte loads after the wait.
#pragma once

// ---- Q5_K: Q4_K's lanes (chunk c = lane & 3 of block ib = lane / 4, 8 blocks a step),
// each with the block's 32 bytes of high bits besides its header and 32 quant bytes ----

// q5k_dot is q4k_dot for a Q5_K chunk: the quants of sub-blocks 2c (low nibbles, with
// bit 2c of each qh byte as their fifth bit) and 2c + 1 (high nibbles, bit 2c + 1),
// element l of each against qh byte l (dequantize_row_q5_K's u1 and u2).
__device__ __forceinline__ int q5k_dot(const uint4 qa, const uint4 qb, const uint4 ha, const uint4 hb, int c, const int* xs, int* sb) {
    const uint32_t w[8] = {qa.x, qa.y, qa.z, qa.w, qb.x, qb.y, qb.z, qb.w};
    const uint32_t hh[8] = {ha.x, ha.y, ha.z, ha.w, hb.x, hb.y, hb.z, hb.w};
    int sa = 0, s2 = 0;
#pragma unroll
    for (int k = 0; k < 8; k++) {
        const uint32_t lo = (w[k] & 0x0f0f0f0f) | (((hh[k] >> (2 * c)) & 0x01010101) << 4);
        const uint32_t hi = ((w[k] >> 4) & 0x0f0f0f0f) | (((hh[k] >> (2 * c + 1)) & 0x01010101) << 4);
        sa = __dp4a((int)lo, xs[k], sa);
        s2 = __dp4a((int)hi, xs[8 + k], s2);
    }
    *sb = s2;
    return sa;
}

// mv1_q5_k: Q5K_R1 rows a warp (mv1.cuh); the block's header (d, dmin and the 12 scale bytes, laid
// out as Q4_K's: q4k_part) at 0, qh at 16, qs at 48 of its 176 bytes.
template <bool SM, bool EF>
__device__ __forceinline__ void mv1_q5_k(const uint8_t* W, i64 ws, const uint8_t* Xg, uint8_t* xs, int n, float* D, int M, int K, int wr) {
    const int lane = threadIdx.x & 31, c = lane & 3, nb = K / 256;
    const int r0 = wr * Q5K_R1;
    const uint8_t* w[Q5K_R1];
#pragma unroll
    for (int i = 0; i < Q5K_R1; i++) w[i] = W + (i64)min(r0 + i, M - 1) * ws;
    uint4 h[Q5K_R1], ha[Q5K_R1], hb[Q5K_R1], qa[Q5K_R1], qb[Q5K_R1];
    auto load = [&](int b, uint4(&H)[Q5K_R1], uint4(&HA)[Q5K_R1], uint4(&HB)[Q5K_R1], uint4(&QA)[Q5K_R1], uint4(&QB)[Q5K_R1]) {
#pragma unroll
        for (int i = 0; i < Q5K_R1; i++) {
            const uint8_t* p = w[i] + 176 * b;
            H[i] = ldw16<EF>(p), HA[i] = ldw16<EF>(p + 16), HB[i] = ldw16<EF>(p + 32);
            QA[i] = ldw16<EF>(p + 48 + 32 * c), QB[i] = ldw16<EF>(p + 64 + 32 * c);
        }
    };
    int ib = lane >> 2;
    if (ib < nb) load(ib, h, ha, hb, qa, qb);
    const uint8_t* X = mv1_ready<SM>(Xg, xs, n, K, 0);
    float acc[Q5K_R1];
#pragma unroll
    for (int i = 0; i < Q5K_R1; i++) acc[i] = 0;
    for (; ib < nb; ib += 8) {
        uint4 nh[Q5K_R1], nha[Q5K_R1], nhb[Q5K_R1], na[Q5K_R1], nq[Q5K_R1];
        if (ib + 8 < nb) load(ib + 8, nh, nha, nhb, na, nq);
        int xv[16];
        float yd;
        int4 bs;
        q4k_x(X, K, ib, c, SM, xv, &yd, &bs);
#pragma unroll
        for (int i = 0; i < Q5K_R1; i++) {
            int sb;
            const int sa = q5k_dot(qa[i], qb[i], ha[i], hb[i], c, xv, &sb);
            acc[i] += q4k_part(h[i], c, sa, sb, yd, bs);
            h[i] = nh[i], ha[i] = nha[i], hb[i] = nhb[i], qa[i] = na[i], qb[i] = nq[i];
        }
    }
    mv1_store<Q5K_R1>(acc, D, r0, M);
}

// mmv_q5_k_nx is mmv_q4_k's form for NX activation rows (matmul.cu's mmv_q5_k_2/4/8):
// two weight rows a warp, mv1_q5_k's lanes and sums, so a batch rounds as its rows one
// at a time do.
template <int NX>
__device__ void mmv_q5_k_nx(const uint8_t* W, i64 wstride, const uint8_t* X, i64 xstride, float* D, i64 dstride, int M, int K,
                            int nx, int rb) {
    const int lane = threadIdx.x & 31;
    const int r = (rb * 4 + (threadIdx.x >> 5)) * 2;
    if (r >= M) return;
    const bool hasB = r + 1 < M;
    const int x0 = blockIdx.y * NX, ncol = min(NX, nx - x0);
    const int nb = K / 256, c = lane & 3;
    const uint8_t* w[2] = {W + (i64)r * wstride, W + (i64)(hasB ? r + 1 : r) * wstride};
    float acc[2][NX];
#pragma unroll
    for (int n = 0; n < NX; n++) acc[0][n] = acc[1][n] = 0;
    for (int ib = lane >> 2; ib < nb; ib += 8) {
        uint4 h[2], ha[2], hb[2], qa[2], qb[2];
#pragma unroll
        for (int i = 0; i < 2; i++) {
            const uint8_t* p = w[i] + 176 * ib;
            h[i] = *(const uint4*)p, ha[i] = *(const uint4*)(p + 16), hb[i] = *(const uint4*)(p + 32);
            qa[i] = *(const uint4*)(p + 48 + 32 * c), qb[i] = *(const uint4*)(p + 64 + 32 * c);
        }
#pragma unroll
        for (int n = 0; n < NX; n++) {
            if (n < ncol) {
                int xv[16];
                float yd;
                int4 bs;
                q4k_x(X + (i64)(x0 + n) * xstride, K, ib, c, false, xv, &yd, &bs);
#pragma unroll
                for (int i = 0; i < 2; i++) {
                    int sb;
                    const int sa = q5k_dot(qa[i], qb[i], ha[i], hb[i], c, xv, &sb);
                    acc[i][n] += q4k_part(h[i], c, sa, sb, yd, bs);
                }
            }
        }
    }
#pragma unroll
    for (int n = 0; n < NX; n++) {
        const float sA = warp_sum(acc[0][n]), sB = warp_sum(acc[1][n]);
        if (lane == 0 && n < ncol) {
            D[(i64)(x0 + n) * dstride + r] = sA;
            if (hasB) D[(i64)(x0 + n) * dstride + r + 1] = sB;
        }
    }
}

// ---- F16 and BF16 rows against an activation row of the same type ----
//
// HALF_R1 rows a warp (mv1.cuh); lane l takes the 16-byte chunks (8 values) l, l + 32,
// l + 64, l + 96 of each step of 128 chunks (HALF_U a lane), the next step's in flight
// while one is summed (four a lane: 205.7 tok/s for the 8B F16 against 199.9 at three,
// four rounds; NOTES.md, session 49). A chunk's eight float products are summed in
// float and the chunk sums in double (mmv_generic adds every product in double: on the
// H200 that made the 8B F16 step bound by its arithmetic, 170 tok/s against 203 this
// way; NOTES.md, session 48).
// Rows whose chunks are not all 16-byte aligned (K % 8, or an odd stride) take the same
// chunks a value at a time (the last one shorter); mmv_generic's F16 and BF16 rows (the
// products of 2-8 rows) sum the same chunks the same way, so batches round as one row.
#ifndef HALF_U
#define HALF_U 4
#endif

template <bool BF>
__device__ __forceinline__ float half_f(uint32_t v) {
    return BF ? bf2f((uint16_t)v) : h2f((uint16_t)v);
}
// half_dot8 is a chunk's eight products, summed in float in element order.
template <bool BF>
__device__ __forceinline__ float half_dot8(uint4 a, uint4 b) {
    const uint32_t av[4] = {a.x, a.y, a.z, a.w}, bv[4] = {b.x, b.y, b.z, b.w};
    float f = 0;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        f += half_f<BF>(av[k] & 0xffff) * half_f<BF>(bv[k] & 0xffff);
        f += half_f<BF>(av[k] >> 16) * half_f<BF>(bv[k] >> 16);
    }
    return f;
}

// half_chunk is a chunk's first n8 (at most 8) products of weights wv (as floats) and
// activations x (halves, or bfloat16s with BF), summed in float in element order: what
// half_dot8 sums for a whole 16-byte chunk, for chunks that are short or unaligned.
template <bool BF>
__device__ __forceinline__ float half_chunk(const float* wv, const uint16_t* x, int n8) {
    float f = 0;
#pragma unroll
    for (int e = 0; e < 8; e++)
        if (e < n8) f += wv[e] * half_f<BF>(x[e]);
    return f;
}

template <bool BF, bool SM, bool EF>
__device__ __forceinline__ void mv1_half(const uint8_t* W, i64 ws, const uint8_t* Xg, uint8_t* xs, int n, float* D, int M, int K, int wr) {
    const int lane = threadIdx.x & 31, nq = K / 8;
    const int r0 = wr * HALF_R1;
    const uint8_t* w[HALF_R1];
#pragma unroll
    for (int i = 0; i < HALF_R1; i++) w[i] = W + (i64)min(r0 + i, M - 1) * ws;
    const bool vec = K % 8 == 0 && ((ws | (i64)(uintptr_t)W) & 15) == 0;  // block-uniform
    uint4 q[HALF_U][HALF_R1];
    auto load = [&](int j0, uint4(&Q)[HALF_U][HALF_R1]) {
#pragma unroll
        for (int u = 0; u < HALF_U; u++) {
            const int j = j0 + 32 * u + lane;
            if (j < nq) {
#pragma unroll
                for (int i = 0; i < HALF_R1; i++) Q[u][i] = ldw16<EF>(w[i] + 16 * j);
            }
        }
    };
    if (vec) load(0, q);
    const uint8_t* X = mv1_ready<SM>(Xg, xs, n, K, -1);
    double acc[HALF_R1];
#pragma unroll
    for (int i = 0; i < HALF_R1; i++) acc[i] = 0;
    if (vec) {
        for (int j0 = 0; j0 < nq; j0 += 32 * HALF_U) {
            uint4 nx[HALF_U][HALF_R1];
            if (j0 + 32 * HALF_U < nq) load(j0 + 32 * HALF_U, nx);
#pragma unroll
            for (int u = 0; u < HALF_U; u++) {
                const int j = j0 + 32 * u + lane;
                if (j < nq) {
                    const uint4 xv = *(const uint4*)(X + 16 * j);
#pragma unroll
                    for (int i = 0; i < HALF_R1; i++) acc[i] += (double)half_dot8<BF>(q[u][i], xv);
                }
            }
#pragma unroll
            for (int u = 0; u < HALF_U; u++)
#pragma unroll
                for (int i = 0; i < HALF_R1; i++) q[u][i] = nx[u][i];
        }
    } else {  // the same chunks' sums, a value at a time
        const uint16_t* xh = (const uint16_t*)X;
        for (int c = lane; 8 * c < K; c += 32) {
            const int j0 = 8 * c, n8 = min(8, K - j0);
#pragma unroll
            for (int i = 0; i < HALF_R1; i++) {
                float wv[8];
#pragma unroll
                for (int e = 0; e < 8; e++) wv[e] = e < n8 ? half_f<BF>(((const uint16_t*)w[i])[j0 + e]) : 0.f;
                acc[i] += (double)half_chunk<BF>(wv, xh + j0, n8);
            }
        }
    }
#pragma unroll
    for (int i = 0; i < HALF_R1; i++) {
        const double s = warp_sumd(acc[i]);
        if (lane == 0 && r0 + i < M) D[r0 + i] = (float)s;
    }
}
