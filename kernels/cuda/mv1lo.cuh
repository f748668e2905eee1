// mv1lo.cuh: batch-1 products (mv1) of Q2_K and Q3_K weights, included by mv1.cuh.
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
