// mv1lo.cuh: batch-1 products (mv1) of the types whose blocks are not 16-byte multiples
// (Q4_0, Q5_0, Q4_1, Q5_1, Q2_K and Q3_K), included by mv1.cuh.

// Q4_0, Q5_0, Q4_1 and Q5_1 (GGUF's 18-, 22-, 20- and 24-byte blocks, kept as they are:
// 2-byte aligned): four lanes a block (part p = lane & 3 of block lane / 4, 8 blocks a
// step), each lane the 4 quant bytes 4p..4p+3 (elements 4p..4p+3 in the low nibbles,
// 16 + 4p.. in the high) and, for Q5_0 and Q5_1, their four high bits from each half of
// qh, all in 16-bit loads; the four lanes' integer sums meet by shuffles and one lane
// applies the block's float formula (block_dot's: Q4_1 and Q5_1 add their min times the
// Q8_1 row's block sum), so each block's term is the generic kernel's. Q50_R1 rows a
// warp, the next step's weights in flight while a step is computed.

// q50_bits spreads the four bits of h into bit 4 of each byte.
__device__ __forceinline__ int q50_bits(uint32_t h) { return (int)(((h * 0x00204081u) & 0x01010101u) << 4); }

template <int T, bool SM, bool EF>
__device__ __forceinline__ void mv1_q4q5(const uint8_t* W, i64 ws, const uint8_t* Xg, uint8_t* xs, int n, float* D, int M, int K, int wr) {
    constexpr bool H5 = T == T_Q5_0 || T == T_Q5_1, ONE = T == T_Q4_1 || T == T_Q5_1;  // qh; a min
    constexpr int BS = T == T_Q4_0 ? 18 : T == T_Q5_0 ? 22 : T == T_Q4_1 ? 20 : 24;
    constexpr int QO = T == T_Q4_0 ? 2 : T == T_Q5_0 ? 6 : T == T_Q4_1 ? 4 : 8, HO = ONE ? 4 : 2;
    const int lane = threadIdx.x & 31, p = lane & 3, nb = K / 32;
    const int r0 = wr * Q50_R1, nj = (nb + 7) / 8;
    const uint8_t* w[Q50_R1];
#pragma unroll
    for (int i = 0; i < Q50_R1; i++) w[i] = W + (i64)min(r0 + i, M - 1) * ws;
    // per row: d (and the min above it), the lane's quant bytes (two halves), qh's two halves
    uint32_t dq[Q50_R1], qa[Q50_R1], qb[Q50_R1], ha[Q50_R1], hb[Q50_R1];
    auto load = [&](int j, uint32_t (&DQ)[Q50_R1], uint32_t (&QA)[Q50_R1], uint32_t (&QB)[Q50_R1], uint32_t (&HA)[Q50_R1],
                    uint32_t (&HB)[Q50_R1]) {
        const int ib = min(8 * j + (lane >> 2), nb - 1);
#pragma unroll
        for (int i = 0; i < Q50_R1; i++) {
            if constexpr (EF) {
                const uint8_t* b = w[i] + (i64)BS * ib;
                DQ[i] = ldw2<EF>(b);
                if (ONE) DQ[i] |= (uint32_t)ldw2<EF>(b + 2) << 16;
                QA[i] = ldw2<EF>(b + QO + 4 * p), QB[i] = ldw2<EF>(b + QO + 4 * p + 2);
                if (H5) HA[i] = ldw2<EF>(b + HO), HB[i] = ldw2<EF>(b + HO + 2);
            } else {
                const uint16_t* b = (const uint16_t*)(w[i] + (i64)BS * ib);
                DQ[i] = ONE ? b[0] | ((uint32_t)b[1] << 16) : b[0];
                QA[i] = b[QO / 2 + 2 * p], QB[i] = b[QO / 2 + 2 * p + 1];
                if (H5) HA[i] = b[HO / 2], HB[i] = b[HO / 2 + 1];
            }
        }
    };
    load(0, dq, qa, qb, ha, hb);
    const uint8_t* X = mv1_ready<SM>(Xg, xs, n, K, -1);
    float acc[Q50_R1];
#pragma unroll
    for (int i = 0; i < Q50_R1; i++) acc[i] = 0;
    for (int j = 0; j < nj; j++) {  // the same steps on every lane: the shuffles are legal
        uint32_t ndq[Q50_R1], nqa[Q50_R1], nqb[Q50_R1], nha[Q50_R1], nhb[Q50_R1];
        if (j + 1 < nj) load(j + 1, ndq, nqa, nqb, nha, nhb);
        const int ibr = 8 * j + (lane >> 2);
        const bool ok = ibr < nb && p == 0;
        const int ib = min(ibr, nb - 1);
        const int xlo = *(const int*)(X + 32 * ib + 4 * p), xhi = *(const int*)(X + 32 * ib + 16 + 4 * p);
        const float dx = ((const float*)(X + K))[ib], sx = ONE ? ((const float*)(X + K))[nb + ib] : 0.f;
#pragma unroll
        for (int i = 0; i < Q50_R1; i++) {
            const uint32_t q = qa[i] | (qb[i] << 16);
            int lo = (int)(q & 0x0f0f0f0fu), hi = (int)((q >> 4) & 0x0f0f0f0fu);
            if (H5) {
                const uint32_t qh = ha[i] | (hb[i] << 16);
                lo |= q50_bits((qh >> (4 * p)) & 15), hi |= q50_bits((qh >> (16 + 4 * p)) & 15);
            }
            if (!ONE) {
                const int z = H5 ? 0x10101010 : 0x08080808;
                lo = __vsub4(lo, z), hi = __vsub4(hi, z);
            }
            int sm = __dp4a(lo, xlo, __dp4a(hi, xhi, 0));
            sm += __shfl_xor_sync(0xffffffffu, sm, 1);
            sm += __shfl_xor_sync(0xffffffffu, sm, 2);
            const float dw = h2f((uint16_t)dq[i]);
            if (ok) {
                if (ONE) {
                    const float dd = dw * dx;
                    acc[i] += dd * (float)sm + h2f((uint16_t)(dq[i] >> 16)) * sx;
                } else {
                    acc[i] += T == T_Q5_0 ? dw * dx * (float)sm : (float)sm * dw * dx;
                }
            }
            if (j + 1 < nj) dq[i] = ndq[i], qa[i] = nqa[i], qb[i] = nqb[i], ha[i] = nha[i], hb[i] = nhb[i];
        }
    }
    mv1_store<Q50_R1>(acc, D, r0, M);
}

// ---- Q2_K and Q3_K ----
//
// Their GGUF blocks (Q2_K 84 bytes: scales[16] | qs[64] | d | dmin; Q3_K 110 bytes:
// hmask[32] | qs[64] | scales[12] | d) are kept as they are, so a block starts on a 4-
// or 2-byte boundary and no lane can load its own bytes 16 at a time. A warp step is 8
// blocks of each of its Q23_R1 rows instead: the warp loads a row's step as the 16-byte
// chunks from the 16-byte boundary at or before it (at most 56 chunks: two a lane),
// holds the next step's chunks in registers while it computes one, and stages the
// current one in its slice of shared memory. Lane t = lane & 3 (h = t / 2, g = t % 2) of
// block lane / 4 then reads from there what mv1_q6_k's lane reads of a Q6_K block (the
// 16 quant bytes of half h, group g: sub-blocks 8h + 2s + g, s = 0..3) against the same
// activation chunks (swizzle 1). The four lanes' integer sums meet by shuffles and one
// lane applies block_dot's float formula, so each block's term is the generic kernel's
// (mmv_generic, which the products of 2-8 rows take) bit for bit.
#pragma once

// Q23_R1 (mv1.cuh) rows a warp. Q23_STAGE is the shared memory a block of the Q2_K/Q3_K kernel stages its weights in
// (matmul.go's q23Stage): four warps, Q23_R1 rows, 64 chunks a row.
#define Q23_STAGE (4 * Q23_R1 * 64 * 16)

// lds16u is the 16 bytes at byte offset off (any) of the 4-byte aligned shared memory p.
__device__ __forceinline__ uint4 lds16u(const uint8_t* p, int off) {
    const uint32_t* q = (const uint32_t*)(p + (off & ~3));
    const int sh = 8 * (off & 3);
    const uint32_t a = q[0], b = q[1], c = q[2], d = q[3], e = q[4];
    return make_uint4(__funnelshift_r(a, b, sh), __funnelshift_r(b, c, sh), __funnelshift_r(c, d, sh), __funnelshift_r(d, e, sh));
}

// q23_byte is byte k (0..3, run time) of word v.
__device__ __forceinline__ int q23_byte(uint32_t v, int k) { return (int)((v >> (8 * k)) & 0xff); }

// q23_sums is a lane's 16 dots (4 dp4a each) of its quant bytes q against xv: for shift
// s, the 2-bit fields s of q (Q2_K: 0..3; Q3_K: less 4 where the hmask bit 4h + s of hm
// is clear).
template <int T>
__device__ __forceinline__ void q23_sums(uint4 q, uint4 hm, int h, const int4 xv[4], int sum[4]) {
    const uint32_t Q[4] = {q.x, q.y, q.z, q.w}, H[4] = {hm.x, hm.y, hm.z, hm.w};
    const int X[4][4] = {{xv[0].x, xv[0].y, xv[0].z, xv[0].w},
                         {xv[1].x, xv[1].y, xv[1].z, xv[1].w},
                         {xv[2].x, xv[2].y, xv[2].z, xv[2].w},
                         {xv[3].x, xv[3].y, xv[3].z, xv[3].w}};
#pragma unroll
    for (int s = 0; s < 4; s++) {
        int a = 0;
#pragma unroll
        for (int k = 0; k < 4; k++) {
            int v = (int)((Q[k] >> (2 * s)) & 0x03030303u);
            if (T == T_Q3_K) v = __vsub4(v | (int)(((H[k] >> (4 * h + s)) & 0x01010101u) << 2), 0x04040404);
            a = __dp4a(v, X[s][k], a);
        }
        sum[s] = a;
    }
}

// mv1_q23_k's st is the block's Q23_STAGE bytes of shared memory (mv1's, so that the two
// forms of a kernel share them).
template <int T, bool SM, bool EF>
__device__ __forceinline__ void mv1_q23_k(const uint8_t* W, i64 ws, const uint8_t* Xg, uint8_t* xs, int n, float* D, int M, int K, int wr,
                                          uint4 (*q23_st)[Q23_R1][64]) {
    constexpr int BS = T == T_Q2_K ? 84 : 110;
    const int lane = threadIdx.x & 31, wp = (threadIdx.x >> 5) & 3, t = lane & 3, h = t >> 1, g = t & 1, nb = K / 256;
    const int r0 = wr * Q23_R1, nj = (nb + 7) / 8;
    const uint8_t* w[Q23_R1];
#pragma unroll
    for (int i = 0; i < Q23_R1; i++) w[i] = W + (i64)min(r0 + i, M - 1) * ws;
    uint4 ca[Q23_R1], cb[Q23_R1];
    auto load = [&](int j) {
#pragma unroll
        for (int i = 0; i < Q23_R1; i++) {
            const uint8_t* s0 = w[i] + (i64)BS * 8 * j;
            const uint8_t* e = w[i] + (i64)BS * min(nb, 8 * j + 8);
            const uint8_t* a0 = (const uint8_t*)((uintptr_t)s0 & ~(uintptr_t)15);
            ca[i] = a0 + 16 * lane < e ? ldw16<EF>(a0 + 16 * lane) : make_uint4(0, 0, 0, 0);
            cb[i] = a0 + 16 * (lane + 32) < e ? ldw16<EF>(a0 + 16 * (lane + 32)) : make_uint4(0, 0, 0, 0);
        }
    };
    load(0);
    const uint8_t* X = mv1_ready<SM>(Xg, xs, n, K, 1);
    float acc[Q23_R1];
#pragma unroll
    for (int i = 0; i < Q23_R1; i++) acc[i] = 0;
    for (int j = 0; j < nj; j++) {  // the same steps on every lane: the shuffles are legal
#pragma unroll
        for (int i = 0; i < Q23_R1; i++) q23_st[wp][i][lane] = ca[i], q23_st[wp][i][lane + 32] = cb[i];
        __syncwarp();
        if (j + 1 < nj) load(j + 1);
        const int ibr = 8 * j + (lane >> 2);
        const bool ok = ibr < nb && t == 0;
        const int ib = min(ibr, nb - 1);
        const uint8_t* xb = X + 256 * ib + 128 * h + 16 * g;
        const int sw = SM ? ((ib & 1) << 1) | h : 0;
        int4 xv[4];
#pragma unroll
        for (int s = 0; s < 4; s++) xv[s] = *(const int4*)(xb + 32 * (s ^ sw));
        const float yd = ((const float*)(X + K))[ib];
        int4 bs0 = make_int4(0, 0, 0, 0), bs1 = bs0;
        if (T == T_Q2_K) {
            const int4* bp = (const int4*)(X + Q8K_BSUMS(K)) + 4 * ib + 2 * h;
            bs0 = bp[0], bs1 = bp[1];
        }
#pragma unroll
        for (int i = 0; i < Q23_R1; i++) {
            const uint8_t* sb = (const uint8_t*)q23_st[wp][i];
            const int o = (int)((uintptr_t)(w[i] + (i64)BS * 8 * j) & 15) + BS * (lane >> 2);
            int sum[4];
            if (T == T_Q3_K) {
                const uint4 hm = lds16u(sb, o + 16 * g), q = lds16u(sb, o + 32 + 32 * h + 16 * g), sc = lds16u(sb, o + 96);
                q23_sums<T>(q, hm, h, xv, sum);
                int tot = 0;
#pragma unroll
                for (int s = 0; s < 4; s++) {
                    // q3_scale(8h + 2s + g): the low nibble h of byte 2s + g, the high two
                    // bits 2(2h + s / 2) of byte 8 + 2(s % 2) + g.
                    const int k = 2 * (s & 1) + g;
                    const int lo = (q23_byte(s < 2 ? sc.x : sc.y, k) >> (4 * h)) & 15;
                    const int hi = (q23_byte(sc.z, k) >> (2 * (2 * h + (s >> 1)))) & 3;
                    tot += ((lo | (hi << 4)) - 32) * sum[s];
                }
                tot += __shfl_xor_sync(0xffffffffu, tot, 1);
                tot += __shfl_xor_sync(0xffffffffu, tot, 2);
                if (ok) acc[i] += h2f((uint16_t)sc.w) * yd * (float)tot;
            } else {
                const uint4 q = lds16u(sb, o + 16 + 32 * h + 16 * g), sc = lds16u(sb, o + 8 * h);
                const uint4 dd = lds16u(sb, o + 80);
                q23_sums<T>(q, q, h, xv, sum);
                const int bsv[4] = {g ? bs0.y : bs0.x, g ? bs0.w : bs0.z, g ? bs1.y : bs1.x, g ? bs1.w : bs1.z};
                int isum = 0, summs = 0;
#pragma unroll
                for (int s = 0; s < 4; s++) {
                    const int b = q23_byte(s < 2 ? sc.x : sc.y, 2 * (s & 1) + g);
                    isum += (b & 15) * sum[s];
                    summs += bsv[s] * (b >> 4);
                }
                isum += __shfl_xor_sync(0xffffffffu, isum, 1);
                isum += __shfl_xor_sync(0xffffffffu, isum, 2);
                summs += __shfl_xor_sync(0xffffffffu, summs, 1);
                summs += __shfl_xor_sync(0xffffffffu, summs, 2);
                const float dall = yd * h2f((uint16_t)dd.x), dmin = yd * h2f((uint16_t)(dd.x >> 16));
                if (ok) acc[i] += dall * (float)isum - dmin * (float)summs;
            }
        }
        __syncwarp();
    }
    mv1_store<Q23_R1>(acc, D, r0, M);
}
