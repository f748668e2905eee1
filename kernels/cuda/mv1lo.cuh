// mv1lo.cuh: batch-1 products (mv1) of the types whose GGUF blocks are not 16-byte
// multiples: Q4_0, Q5_0, Q4_1, Q5_1 (18, 22, 20, 24 bytes), Q2_K (84: scales[16] | qs[64] |
// d | dmin) and Q3_K (110: hmask[32] | qs[64] | scales[12] | d), included by mv1.cuh.
//
// The blocks are kept as they are, so a block starts on a 2- or 4-byte boundary and no
// lane can load its own bytes 16 at a time (16-bit loads of each lane's bytes reached
// ~1 TB/s: 8B Q4_1 204 tok/s on the H200). A warp step is a run of blocks of each of the
// warp's R rows instead: the warp loads a row's run as the 16-byte chunks from the
// 16-byte boundary at or before it (at most 49 or 56 chunks: two a lane, lo_load), holds
// the chunks of the steps ahead in registers while it computes one (LoRing: LO23_D steps
// for Q2_K/Q3_K, LO50_D for the 32-value types' dense products, one for their per-row
// matrices), and stages the current one in its slice of shared memory (lo_stage), from
// which each lane reads its block's bytes at any offset (lds4u, lds16u). Each block's
// integer sum is whole before its float formula (block_dot's) is applied, so each
// block's term is the generic kernel's (mmv_generic, which the products of 2-8 rows
// take) bit for bit. mv1 (mv1.cuh) gives a block's four warps 4 x R x 64 chunks of
// shared memory (matmul.go's mv1Stage).
#pragma once

// lo_smem23 and lo_smem50 are a block's stage (four warps of R rows of 64 chunks) of the
// Q2_K/Q3_K and of the 32-value kernels: one array a kernel whatever types and forms it
// takes (a Q2_K or Q3_K kernel has one type; mmv_multi_q4_0 stages Q4_0 and Q5_0 rows
// in one array).
__device__ __forceinline__ uint4 (*lo_smem23())[Q23_R1][64] {
    __shared__ __align__(16) uint4 st[4][Q23_R1][64];
    return st;
}
__device__ __forceinline__ uint4 (*lo_smem50())[Q50_R1][64] {
    __shared__ __align__(16) uint4 st[4][Q50_R1][64];
    return st;
}

// lo_load loads step j (SB bytes of each row, the row RB bytes long) of the warp's R rows
// w: chunk lane of the 16-byte chunks from the boundary at or before the step into A,
// chunk lane + 32 into B; chunks past the row are zeros, not loaded.
template <int R, int SB, bool EF>
__device__ __forceinline__ void lo_load(const uint8_t* const (&w)[R], int RB, int j, uint4 (&A)[R], uint4 (&B)[R]) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int i = 0; i < R; i++) {
        const uint8_t* s0 = w[i] + (i64)SB * j;
        const uint8_t* e = w[i] + min((i64)RB, (i64)SB * (j + 1));
        const uint8_t* a0 = (const uint8_t*)((uintptr_t)s0 & ~(uintptr_t)15);
        A[i] = a0 + 16 * lane < e ? ldw16<EF>(a0 + 16 * lane) : make_uint4(0, 0, 0, 0);
        B[i] = a0 + 16 * (lane + 32) < e ? ldw16<EF>(a0 + 16 * (lane + 32)) : make_uint4(0, 0, 0, 0);
    }
}

// lo_stage stores the chunks of lo_load into the warp's st (R rows of 64 chunks) for
// every lane to read.
template <int R>
__device__ __forceinline__ void lo_stage(uint4 (*st)[64], const uint4 (&A)[R], const uint4 (&B)[R]) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int i = 0; i < R; i++) st[i][lane] = A[i], st[i][lane + 32] = B[i];
    __syncwarp();
}

// LO50_D is the steps of a warp's rows of the 32-value types in flight in registers
// while it computes one, in the dense products; per-row matrices (mmv_id, mmv_idw: ID)
// and Q2_K/Q3_K keep one. 8B tg128 on the H200, two steps against one (session 50):
// Q4_0 411.6 / 395.0, Q4_1 424.7 / 421.4 (a step of 32 Q4_0 blocks is 37 chunks a row,
// about half what a Q4_K warp keeps in flight); Q3_K_M 431.6 / 431.6 and Q2_K 453.8 /
// 449.7, 454.2 / 455.2 (LO23_D): even. DeepSeek-V2-Lite Q5_K_M, whose routed downs are
// Q5_1 (mmv_id_q5_1), fell ~3% with every kernel at two.
#ifndef LO50_D
#define LO50_D 2
#endif
#ifndef LO23_D
#define LO23_D 1
#endif

// LoRing holds the chunks of the D steps in flight (lo_load's A and B).
template <int R, int D>
struct LoRing {
    uint4 a[D][R], b[D][R];
};

// lo_first loads the first D of a warp's nj steps into c (before the kernel's wait).
template <int R, int SB, bool EF, int D>
__device__ __forceinline__ void lo_first(const uint8_t* const (&w)[R], int RB, int nj, LoRing<R, D>& c) {
#pragma unroll
    for (int d = 0; d < D; d++)
        if (d == 0 || d < nj) lo_load<R, SB, EF>(w, RB, d, c.a[d], c.b[d]);  // nj >= 1
}

// lo_run runs step(j) for j = 0 .. nj - 1 (the same on every lane), each on its chunks
// staged in st, the step D ahead loaded into the registers that held them.
template <int R, int SB, bool EF, int D, typename F>
__device__ __forceinline__ void lo_run(const uint8_t* const (&w)[R], int RB, int nj, uint4 (*st)[64], LoRing<R, D>& c, F&& step) {
    for (int j = 0; j < nj; j += D) {
#pragma unroll
        for (int d = 0; d < D; d++) {
            if (d == 0 || j + d < nj) {
                lo_stage<R>(st, c.a[d], c.b[d]);
                if (j + d + D < nj) lo_load<R, SB, EF>(w, RB, j + d + D, c.a[d], c.b[d]);
                step(j + d);
                __syncwarp();
            }
        }
    }
}

// lo_off is where step byte off of row w starts in its staged chunks.
__device__ __forceinline__ int lo_off(const uint8_t* w, int off) { return (int)((uintptr_t)(w + off) & 15); }

// lds4u and lds16u are the 4 and 16 bytes at byte offset off (any) of the 4-byte aligned
// shared memory p.
__device__ __forceinline__ uint32_t lds4u(const uint8_t* p, int off) {
    const uint32_t* q = (const uint32_t*)(p + (off & ~3));
    return __funnelshift_r(q[0], q[1], 8 * (off & 3));
}
__device__ __forceinline__ uint4 lds16u(const uint8_t* p, int off) {
    const uint32_t* q = (const uint32_t*)(p + (off & ~3));
    const int sh = 8 * (off & 3);
    const uint32_t a = q[0], b = q[1], c = q[2], d = q[3], e = q[4];
    return make_uint4(__funnelshift_r(a, b, sh), __funnelshift_r(b, c, sh), __funnelshift_r(c, d, sh), __funnelshift_r(d, e, sh));
}

// q50_bits spreads the four bits of h into bit 4 of each byte.
__device__ __forceinline__ int q50_bits(uint32_t h) { return (int)(((h * 0x00204081u) & 0x01010101u) << 4); }

// Q4_0, Q5_0, Q4_1 and Q5_1: 32 blocks a step, lane l taking block l whole (its 16
// quant bytes, with Q5_0 and Q5_1 its 32 high bits; Q4_1 and Q5_1 add their min times the
// Q8_1 row's block sum), Q50_R1 rows a warp, LD steps in flight.
template <int T, bool SM, bool EF, int LD>
__device__ __forceinline__ void mv1_q4q5(const uint8_t* W, i64 ws, const uint8_t* Xg, uint8_t* xs, int n, float* D, int M, int K, int wr,
                                         uint4 (*st)[Q50_R1][64]) {
    constexpr bool H5 = T == T_Q5_0 || T == T_Q5_1, ONE = T == T_Q4_1 || T == T_Q5_1;  // qh; a min
    constexpr int BS = T == T_Q4_0 ? 18 : T == T_Q5_0 ? 22 : T == T_Q4_1 ? 20 : 24;
    constexpr int QO = T == T_Q4_0 ? 2 : T == T_Q5_0 ? 6 : T == T_Q4_1 ? 4 : 8, HO = ONE ? 4 : 2;
    const int lane = threadIdx.x & 31, wp = (threadIdx.x >> 5) & 3, nb = K / 32;
    const int r0 = wr * Q50_R1, nj = (nb + 31) / 32;
    const uint8_t* w[Q50_R1];
#pragma unroll
    for (int i = 0; i < Q50_R1; i++) w[i] = W + (i64)min(r0 + i, M - 1) * ws;
    LoRing<Q50_R1, LD> c;
    lo_first<Q50_R1, BS * 32, EF>(w, BS * nb, nj, c);
    const uint8_t* X = mv1_ready<SM>(Xg, xs, n, K, -1);
    float acc[Q50_R1];
#pragma unroll
    for (int i = 0; i < Q50_R1; i++) acc[i] = 0;
    lo_run<Q50_R1, BS * 32, EF, LD>(w, BS * nb, nj, st[wp], c, [&](int j) {
        const int ibr = 32 * j + lane;
        const bool ok = ibr < nb;
        const int ib = min(ibr, nb - 1);
        const int4 x0 = *(const int4*)(X + 32 * ib), x1 = *(const int4*)(X + 32 * ib + 16);
        const int XL[4] = {x0.x, x0.y, x0.z, x0.w}, XH[4] = {x1.x, x1.y, x1.z, x1.w};
        const float dx = ((const float*)(X + K))[ib], sx = ONE ? ((const float*)(X + K))[nb + ib] : 0.f;
#pragma unroll
        for (int i = 0; i < Q50_R1; i++) {
            const uint8_t* sb = (const uint8_t*)st[wp][i];
            const int o = lo_off(w[i], BS * 32 * j) + BS * lane;
            const uint32_t dm = lds4u(sb, o), qh = H5 ? lds4u(sb, o + HO) : 0;
            const uint4 q = lds16u(sb, o + QO);
            const uint32_t Q[4] = {q.x, q.y, q.z, q.w};
            int sm = 0;
#pragma unroll
            for (int k = 0; k < 4; k++) {  // bytes 4k..4k+3: elements 4k.. (low nibbles), 16 + 4k.. (high)
                int lo = (int)(Q[k] & 0x0f0f0f0fu), hi = (int)((Q[k] >> 4) & 0x0f0f0f0fu);
                if (H5) lo |= q50_bits((qh >> (4 * k)) & 15), hi |= q50_bits((qh >> (16 + 4 * k)) & 15);
                if (!ONE) {
                    const int z = H5 ? 0x10101010 : 0x08080808;
                    lo = __vsub4(lo, z), hi = __vsub4(hi, z);
                }
                sm = __dp4a(lo, XL[k], __dp4a(hi, XH[k], sm));
            }
            const float dw = h2f((uint16_t)dm);
            if (ok) {
                if (ONE) {
                    const float dd = dw * dx;
                    acc[i] += dd * (float)sm + h2f((uint16_t)(dm >> 16)) * sx;
                } else {
                    acc[i] += T == T_Q5_0 ? dw * dx * (float)sm : (float)sm * dw * dx;
                }
            }
        }
    });
    mv1_store<Q50_R1>(acc, D, r0, M);
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

// Q2_K and Q3_K: 8 blocks a step. Lane t = lane & 3 (h = t / 2, g = t % 2) of block
// lane / 4 reads from the staged step what mv1_q6_k's lane reads of a Q6_K block (the 16
// quant bytes of half h, group g: sub-blocks 8h + 2s + g, s = 0..3) against the same
// activation chunks (swizzle 1); the four lanes' integer sums meet by shuffles.
template <int T, bool SM, bool EF>
__device__ __forceinline__ void mv1_q23_k(const uint8_t* W, i64 ws, const uint8_t* Xg, uint8_t* xs, int n, float* D, int M, int K, int wr,
                                          uint4 (*st)[Q23_R1][64]) {
    constexpr int BS = T == T_Q2_K ? 84 : 110;
    const int lane = threadIdx.x & 31, wp = (threadIdx.x >> 5) & 3, t = lane & 3, h = t >> 1, g = t & 1, nb = K / 256;
    const int r0 = wr * Q23_R1, nj = (nb + 7) / 8;
    const uint8_t* w[Q23_R1];
#pragma unroll
    for (int i = 0; i < Q23_R1; i++) w[i] = W + (i64)min(r0 + i, M - 1) * ws;
    LoRing<Q23_R1, LO23_D> c;
    lo_first<Q23_R1, BS * 8, EF>(w, BS * nb, nj, c);
    const uint8_t* X = mv1_ready<SM>(Xg, xs, n, K, 1);
    float acc[Q23_R1];
#pragma unroll
    for (int i = 0; i < Q23_R1; i++) acc[i] = 0;
    // the same steps on every lane: the shuffles are legal
    lo_run<Q23_R1, BS * 8, EF, LO23_D>(w, BS * nb, nj, st[wp], c, [&](int j) {
        const int ibr = 8 * j + (lane >> 2);
        const bool ok = ibr < nb && t == 0;
        const int ib = min(ibr, nb - 1);
        int4 xv[4];
        const float yd = q6k_x<SM>(X, K, ib, h, g, xv);
        int4 bs0 = make_int4(0, 0, 0, 0), bs1 = bs0;
        if (T == T_Q2_K) {
            const int4* bp = (const int4*)(X + Q8K_BSUMS(K)) + 4 * ib + 2 * h;
            bs0 = bp[0], bs1 = bp[1];
        }
#pragma unroll
        for (int i = 0; i < Q23_R1; i++) {
            const uint8_t* sb = (const uint8_t*)st[wp][i];
            const int o = lo_off(w[i], BS * 8 * j) + BS * (lane >> 2);
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
                const uint4 q = lds16u(sb, o + 16 + 32 * h + 16 * g);
                const uint32_t sc0 = lds4u(sb, o + 8 * h), sc1 = lds4u(sb, o + 8 * h + 4), dd = lds4u(sb, o + 80);
                q23_sums<T>(q, q, h, xv, sum);
                const int bsv[4] = {g ? bs0.y : bs0.x, g ? bs0.w : bs0.z, g ? bs1.y : bs1.x, g ? bs1.w : bs1.z};
                int isum = 0, summs = 0;
#pragma unroll
                for (int s = 0; s < 4; s++) {
                    const int b = q23_byte(s < 2 ? sc0 : sc1, 2 * (s & 1) + g);
                    isum += (b & 15) * sum[s];
                    summs += bsv[s] * (b >> 4);
                }
                isum += __shfl_xor_sync(0xffffffffu, isum, 1);
                isum += __shfl_xor_sync(0xffffffffu, isum, 2);
                summs += __shfl_xor_sync(0xffffffffu, summs, 1);
                summs += __shfl_xor_sync(0xffffffffu, summs, 2);
                const float dall = yd * h2f((uint16_t)dd), dmin = yd * h2f((uint16_t)(dd >> 16));
                if (ok) acc[i] += dall * (float)isum - dmin * (float)summs;
            }
        }
    });
    mv1_store<Q23_R1>(acc, D, r0, M);
}
