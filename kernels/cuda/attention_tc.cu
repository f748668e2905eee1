// attention_tc.cu: causal attention for many query rows (prefill) on tensor cores, with
// the numbers of attention_smem and the reference: s_t = (f16(q) . K_t) * scale over the
// row's positions 0..pos, M the exact max, L the sum of expf(s_t - M), p_t =
// f16(expf(s_t - M) * (1/L)) and out = sum of p_t * V_t. Both products are f16 mma.sync
// (m16n8k16) with f32 accumulation, so only the order of the sums differs. An online
// softmax would round p against a running max, so each tile of queries takes two passes
// over its keys: pass 1 finds every query's max and sum, pass 2 computes the scores again
// (the same instructions, so the same floats) and accumulates P V. Past TC_ONE_TILES key
// tiles (512 positions: a long prompt's later rows, or a prompt at depth, where the
// attention was 48% of the 8B's pp512 after 16,384 positions) a tile takes one pass with
// an online softmax instead, as flash attention and llama.cpp's do: p is rounded to f16
// against the running max, before the division by the sum, so those rows agree with the
// reference to that rounding. Short prompts keep the reference's numbers.
//
// A block of 4 warps takes TC_Q query vectors of one KV head: RT = TC_Q/G rows of the
// batch times the G query heads that read that KV head (vector r*G + g: row r, head g),
// 16 vectors a warp. Key positions come in tiles of TC_K, K (and in pass 2 V) copied to
// shared memory with cp.async, two tiles in flight, rows XOR-swizzled by 16-byte chunk
// for conflict-free ldmatrix. Each vector masks the positions past its own row's
// position; a warp skips the key tiles that all its vectors mask.
//
// The rows of a block must read one sequence's keys. Grid (nkv*zs, chunks): the batch is
// cut into chunks of RT consecutive rows; a chunk's runs of rows with the same seq entry
// (all of it without a table) are its tiles, tile u taken by block z = u % zs of the chunk
// (the host sizes zs for the sequences of the batch; a chunk with more runs than zs gives
// a block several). Chunks of late rows (the most positions) start first.
//
// Dynamic shared memory: TC_Q*D + 4*TC_K*D halves (Q, then two stages of K and V tiles).
// D (the head dim of K and V) is 64 or 128; G at most 8.
#include "common.cuh"

#define TC_Q 64  // query vectors a block
#define TC_K 64  // key positions a shared-memory tile
#define TC_THREADS 128
#ifndef TC_ONE_TILES
#define TC_ONE_TILES 8  // past this many key tiles (512 positions) a tile takes one pass (tc_onepass)
#endif

// tc_load copies the D halves of KV head kvh at key positions t0 .. t0+TC_K-1 into the
// tile sm, zeros past nkeys (masked probabilities are 0, and 0 times a zero stays 0).
template <int D>
__device__ __forceinline__ void tc_load(uint8_t* sm, const uint16_t* src, i64 stride, int kvh, const int* tab, int bs,
                                        int t0, int nkeys) {
    for (int e = threadIdx.x; e < TC_K * (D / 8); e += TC_THREADS) {
        const int r = e / (D / 8), c = e % (D / 8), t = t0 + r;
        const bool ok = t < nkeys;
        const uint16_t* p = ok ? src + tc_row(tab, bs, t) * stride + kvh * D + 8 * c : src;
        tc_cp16(sm + tc_off<D>(r, c), p, ok);
    }
}

// tc_scores puts the warp's scaled scores against the TC_K keys of tile ks (from t0) in
// sc: n-tile j, accumulator e is the vector of row g (e < 2) or g+8 of the warp's 16 and
// position t0 + 8j + 2*(lane%4) + e%2, with g = lane/4; -inf past the vector's limit (l0
// for row g, l1 for row g+8).
template <int D>
__device__ __forceinline__ void tc_scores(float (*sc)[4], const uint32_t (*qf)[4], const uint8_t* ks, int t0, int l0,
                                          int l1, float scale) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int j = 0; j < TC_K / 8; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) sc[j][e] = 0;
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++) {
#pragma unroll
        for (int j = 0; j < TC_K / 8; j += 2) {
            uint32_t b[4];
            tc_ldsm(b, ks + tc_off<D>(8 * j + (lane & 7) + ((lane >> 4) << 3), 2 * kk + ((lane >> 3) & 1)));
            tc_mma(sc[j], qf[kk], b[0], b[1]);
            tc_mma(sc[j + 1], qf[kk], b[2], b[3]);
        }
    }
    const int t = t0 + 2 * (lane & 3);
#pragma unroll
    for (int j = 0; j < TC_K / 8; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) sc[j][e] = t + 8 * j + (e & 1) <= (e < 2 ? l0 : l1) ? sc[j][e] * scale : -INFINITY;
}

// tc_pv adds P V of a tile to the warp's output sums o (n-tile j, accumulator e: dims
// 8j + 2*(lane%4) + e%2 of row g or g+8): pa the probabilities as A fragments (keys
// 16c.. of the tile), vs the V tile.
template <int D>
__device__ __forceinline__ void tc_pv(float (*o)[4], const uint32_t (*pa)[4], const uint8_t* vs) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int c = 0; c < TC_K / 16; c++) {
#pragma unroll
        for (int jj = 0; jj < D / 16; jj++) {
            uint32_t b[4];
            tc_ldsm_t(b, vs + tc_off<D>(16 * c + (lane & 7) + (((lane >> 3) & 1) << 3), 2 * jj + (lane >> 4)));
            tc_mma(o[2 * jj], pa[c], b[0], b[1]);
            tc_mma(o[2 * jj + 1], pa[c], b[2], b[3]);
        }
    }
}

// tc_rowmax: the max of rows g (x0) and g+8 (x1) over the tile's scores sc, all four
// lanes of the rows.
__device__ __forceinline__ void tc_rowmax(const float (*sc)[4], float& x0, float& x1) {
    x0 = -INFINITY, x1 = -INFINITY;
#pragma unroll
    for (int j = 0; j < TC_K / 8; j++) {
        x0 = fmaxf(x0, fmaxf(sc[j][0], sc[j][1]));
        x1 = fmaxf(x1, fmaxf(sc[j][2], sc[j][3]));
    }
    x0 = fmaxf(x0, __shfl_xor_sync(0xffffffffu, x0, 1));
    x0 = fmaxf(x0, __shfl_xor_sync(0xffffffffu, x0, 2));
    x1 = fmaxf(x1, __shfl_xor_sync(0xffffffffu, x1, 1));
    x1 = fmaxf(x1, __shfl_xor_sync(0xffffffffu, x1, 2));
}

// tc_load_kv issues the copies of the K and V tiles from position t0 into stage slot off.
template <int D>
__device__ __forceinline__ void tc_load_kv(uint8_t* ksm, uint8_t* vsm, int off, const uint16_t* k, i64 kstride,
                                           const uint16_t* v, i64 vstride, int kvh, const int* tab, int bs, int t0,
                                           int nkeys) {
    tc_load<D>(ksm + off, k, kstride, kvh, tab, bs, t0, nkeys);
    tc_load<D>(vsm + off, v, vstride, kvh, tab, bs, t0, nkeys);
}

// tc_onepass: the warp's output sums o over all ntile tiles in one pass, as flash
// attention does (tc_tile's choice past TC_ONE_TILES tiles): per tile the rows' running
// max m grows to the tile's, the sums and o are rescaled by expf(m_old - m), and the
// probabilities expf(s - m) go to P V rounded to f16; o is divided by the sum at the end.
template <int D>
__device__ __forceinline__ void tc_onepass(float (*o)[4], const uint32_t (*qf)[4], uint8_t* ksm, uint8_t* vsm,
                                           const uint16_t* k, i64 kstride, const uint16_t* v, i64 vstride, int kvh,
                                           const int* tab, int bs, int nkeys, int ntile, int wmax, int l0, int l1,
                                           float scale) {
    const int stage = 2 * TC_K * D;
    float m0 = -INFINITY, m1 = -INFINITY, s0 = 0, s1 = 0;
    tc_load_kv<D>(ksm, vsm, 0, k, kstride, v, vstride, kvh, tab, bs, 0, nkeys);
    tc_commit();
    for (int it = 0; it < ntile; it++) {
        if (it + 1 < ntile)
            tc_load_kv<D>(ksm, vsm, ((it + 1) & 1) * stage, k, kstride, v, vstride, kvh, tab, bs, (it + 1) * TC_K, nkeys);
        tc_commit();
        tc_wait1();
        __syncthreads();
        if (it * TC_K <= wmax) {
            float sc[TC_K / 8][4];
            tc_scores<D>(sc, qf, ksm + (it & 1) * stage, it * TC_K, l0, l1, scale);
            float x0, x1;
            tc_rowmax(sc, x0, x1);
            // Tile 0 holds position 0, which no vector masks: m is finite from there on
            // (and expf(-inf - m) is 0 at tile 0).
            const float n0 = fmaxf(m0, x0), n1 = fmaxf(m1, x1);
            const float e0 = expf(m0 - n0), e1 = expf(m1 - n1);
            float p0 = 0, p1 = 0;
            uint32_t pa[TC_K / 16][4];
#pragma unroll
            for (int c = 0; c < TC_K / 16; c++) {
                float x[2][4];
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    x[h][0] = expf(sc[2 * c + h][0] - n0), x[h][1] = expf(sc[2 * c + h][1] - n0);
                    x[h][2] = expf(sc[2 * c + h][2] - n1), x[h][3] = expf(sc[2 * c + h][3] - n1);
                    p0 += x[h][0] + x[h][1];
                    p1 += x[h][2] + x[h][3];
                }
                pa[c][0] = f2h(x[0][0]) | ((uint32_t)f2h(x[0][1]) << 16);
                pa[c][1] = f2h(x[0][2]) | ((uint32_t)f2h(x[0][3]) << 16);
                pa[c][2] = f2h(x[1][0]) | ((uint32_t)f2h(x[1][1]) << 16);
                pa[c][3] = f2h(x[1][2]) | ((uint32_t)f2h(x[1][3]) << 16);
            }
            s0 = s0 * e0 + p0;
            s1 = s1 * e1 + p1;
            m0 = n0;
            m1 = n1;
#pragma unroll
            for (int j = 0; j < D / 8; j++) o[j][0] *= e0, o[j][1] *= e0, o[j][2] *= e1, o[j][3] *= e1;
            tc_pv<D>(o, pa, vsm + (it & 1) * stage);
        }
        __syncthreads();
    }
    s0 += __shfl_xor_sync(0xffffffffu, s0, 1);
    s0 += __shfl_xor_sync(0xffffffffu, s0, 2);
    s1 += __shfl_xor_sync(0xffffffffu, s1, 1);
    s1 += __shfl_xor_sync(0xffffffffu, s1, 2);
    const float inv0 = 1.0f / s0, inv1 = 1.0f / s1;
#pragma unroll
    for (int j = 0; j < D / 8; j++) o[j][0] *= inv0, o[j][1] *= inv0, o[j][2] *= inv1, o[j][3] *= inv1;
}

// tc_twopass: the warp's output sums o over all ntile tiles in two passes (the
// reference's rounding, tc_tile's choice up to TC_ONE_TILES tiles).
template <int D>
__device__ __forceinline__ void tc_twopass(float (*o)[4], const uint32_t (*qf)[4], uint8_t* ksm, uint8_t* vsm,
                                           const uint16_t* k, i64 kstride, const uint16_t* v, i64 vstride, int kvh,
                                           const int* tab, int bs, int nkeys, int ntile, int wmax, int l0, int l1,
                                           float scale) {
    const int stage = 2 * TC_K * D;
    // Pass 1: each row's max m and sum l (this thread's share of it, against m).
    float m0 = -INFINITY, m1 = -INFINITY, s0 = 0, s1 = 0;
    tc_load<D>(ksm, k, kstride, kvh, tab, bs, 0, nkeys);
    tc_commit();
    for (int it = 0; it < ntile; it++) {
        if (it + 1 < ntile) tc_load<D>(ksm + ((it + 1) & 1) * stage, k, kstride, kvh, tab, bs, (it + 1) * TC_K, nkeys);
        tc_commit();
        tc_wait1();
        __syncthreads();
        if (it * TC_K <= wmax) {
            float sc[TC_K / 8][4];
            tc_scores<D>(sc, qf, ksm + (it & 1) * stage, it * TC_K, l0, l1, scale);
            float x0, x1;
            tc_rowmax(sc, x0, x1);
            // Tile 0 holds position 0, which no vector masks: m is finite from there on.
            const float n0 = fmaxf(m0, x0), n1 = fmaxf(m1, x1);
            float e0 = 0, e1 = 0;
#pragma unroll
            for (int j = 0; j < TC_K / 8; j++) {
                e0 += expf(sc[j][0] - n0) + expf(sc[j][1] - n0);
                e1 += expf(sc[j][2] - n1) + expf(sc[j][3] - n1);
            }
            s0 = s0 * expf(m0 - n0) + e0;
            s1 = s1 * expf(m1 - n1) + e1;
            m0 = n0;
            m1 = n1;
        }
        __syncthreads();
    }
    s0 += __shfl_xor_sync(0xffffffffu, s0, 1);
    s0 += __shfl_xor_sync(0xffffffffu, s0, 2);
    s1 += __shfl_xor_sync(0xffffffffu, s1, 1);
    s1 += __shfl_xor_sync(0xffffffffu, s1, 2);
    const float inv0 = 1.0f / s0, inv1 = 1.0f / s1;

    // Pass 2: the scores again, their probabilities, and P V.
    tc_load_kv<D>(ksm, vsm, 0, k, kstride, v, vstride, kvh, tab, bs, 0, nkeys);
    tc_commit();
    for (int it = 0; it < ntile; it++) {
        if (it + 1 < ntile) {
            const int t0 = (it + 1) * TC_K, off = ((it + 1) & 1) * stage;
            tc_load_kv<D>(ksm, vsm, off, k, kstride, v, vstride, kvh, tab, bs, t0, nkeys);
        }
        tc_commit();
        tc_wait1();
        __syncthreads();
        if (it * TC_K <= wmax) {
            float sc[TC_K / 8][4];
            tc_scores<D>(sc, qf, ksm + (it & 1) * stage, it * TC_K, l0, l1, scale);
            // The scores' accumulators of n-tiles 2c and 2c+1 are the A fragment of keys
            // 16c .. 16c+15.
            uint32_t pa[TC_K / 16][4];
#pragma unroll
            for (int c = 0; c < TC_K / 16; c++) {
                pa[c][0] = tc_prob(sc[2 * c][0], m0, inv0) | (tc_prob(sc[2 * c][1], m0, inv0) << 16);
                pa[c][1] = tc_prob(sc[2 * c][2], m1, inv1) | (tc_prob(sc[2 * c][3], m1, inv1) << 16);
                pa[c][2] = tc_prob(sc[2 * c + 1][0], m0, inv0) | (tc_prob(sc[2 * c + 1][1], m0, inv0) << 16);
                pa[c][3] = tc_prob(sc[2 * c + 1][2], m1, inv1) | (tc_prob(sc[2 * c + 1][3], m1, inv1) << 16);
            }
            tc_pv<D>(o, pa, vsm + (it & 1) * stage);
        }
        __syncthreads();
    }
}

// tc_tile computes the attention of nr rows of one sequence from row row0 (at most
// TC_Q/G), every query head of KV head kvh.
template <int D>
__device__ __forceinline__ void tc_tile(uint8_t* smem, int* lim, float* dst, i64 dstride, const float* q, i64 qstride,
                                        const uint16_t* k, i64 kstride, const uint16_t* v, i64 vstride, const int* pos,
                                        int G, int kvh, float scale, const int* tab, int bs, int row0, int nr) {
    uint8_t* qsm = smem;                   // [TC_Q][D]
    uint8_t* ksm = qsm + 2 * TC_Q * D;     // [2][TC_K][D]
    uint8_t* vsm = ksm + 4 * TC_K * D;     // [2][TC_K][D]
    const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
    const int nq = nr * G;
    if (tid < TC_Q) lim[tid] = tid < nq ? pos[row0 + tid / G] : 0;  // padding vectors: position 0
    for (int e = tid; e < TC_Q * (D / 8); e += TC_THREADS) {
        const int qv = e / (D / 8), c = e % (D / 8);
        uint32_t h[4] = {0, 0, 0, 0};
        if (qv < nq) {
            const float* src = q + (i64)(row0 + qv / G) * qstride + (i64)(kvh * G + qv % G) * D + 8 * c;
#pragma unroll
            for (int j = 0; j < 4; j++) h[j] = f2h(src[2 * j]) | ((uint32_t)f2h(src[2 * j + 1]) << 16);
        }
        *(uint4*)(qsm + tc_off<D>(qv, c)) = make_uint4(h[0], h[1], h[2], h[3]);
    }
    __syncthreads();
    int nkeys = 0, wmax = 0;
    for (int j = 0; j < TC_Q; j++) nkeys = max(nkeys, lim[j]);
    for (int j = 16 * w; j < 16 * w + 16; j++) wmax = max(wmax, lim[j]);
    nkeys++;
    const int ntile = (nkeys + TC_K - 1) / TC_K;
    const int l0 = lim[16 * w + (lane >> 2)], l1 = lim[16 * w + (lane >> 2) + 8];
    uint32_t qf[D / 16][4];
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++) tc_ldsm(qf[kk], qsm + tc_off<D>(16 * w + (lane & 15), 2 * kk + (lane >> 4)));
    float o[D / 8][4];
#pragma unroll
    for (int j = 0; j < D / 8; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) o[j][e] = 0;
    if (ntile > TC_ONE_TILES)
        tc_onepass<D>(o, qf, ksm, vsm, k, kstride, v, vstride, kvh, tab, bs, nkeys, ntile, wmax, l0, l1, scale);
    else
        tc_twopass<D>(o, qf, ksm, vsm, k, kstride, v, vstride, kvh, tab, bs, nkeys, ntile, wmax, l0, l1, scale);

    // Rows g and g+8 of the warp's vectors, dims 8j + 2*(lane%4) and the next.
    const int qa = 16 * w + (lane >> 2), qb = qa + 8, d0 = 2 * (lane & 3);
    float* da = dst + (i64)(row0 + qa / G) * dstride + (i64)(kvh * G + qa % G) * D + d0;
    float* db = dst + (i64)(row0 + qb / G) * dstride + (i64)(kvh * G + qb % G) * D + d0;
#pragma unroll
    for (int j = 0; j < D / 8; j++) {
        if (qa < nq) *(float2*)(da + 8 * j) = make_float2(o[j][0], o[j][1]);
        if (qb < nq) *(float2*)(db + 8 * j) = make_float2(o[j][2], o[j][3]);
    }
}

template <int D>
__device__ __forceinline__ void attention_tc(float* dst, i64 dstride, const float* q, i64 qstride, const uint16_t* k,
                                             i64 kstride, const uint16_t* v, i64 vstride, const int* pos, int nhead,
                                             int nkv, float scale, const int* table, int tcols, const int* seq, int bs,
                                             int n, int zs) {
    extern __shared__ __align__(16) uint8_t tc_smem[];
    __shared__ int lim[TC_Q];  // each vector's position (its last key)
    const int G = nhead / nkv, RT = TC_Q / G;
    const int kvh = blockIdx.x % nkv, z = blockIdx.x / nkv;
    const int base = (gridDim.y - 1 - blockIdx.y) * RT, cnt = min(RT, n - base);
    const int lane = threadIdx.x & 31;
    // Bit r of starts: row base+r starts a run of one sequence's rows (RT <= 64).
    uint64_t starts = 1;
    if (table) {
        const int* s = seq + base;
        const uint32_t lo = __ballot_sync(0xffffffffu, lane > 0 && lane < cnt && s[lane] != s[lane - 1]);
        const uint32_t hi = __ballot_sync(0xffffffffu, lane + 32 < cnt && s[lane + 32] != s[lane + 31]);
        starts |= lo | ((uint64_t)hi << 32);
    }
    const int runs = __popcll(starts);
    for (int u = z; u < runs; u += zs) {
        uint64_t f = starts;
        for (int j = 0; j < u; j++) f &= f - 1;
        const int r0 = __ffsll(f) - 1;
        f &= f - 1;
        const int r1 = f ? __ffsll(f) - 1 : cnt;
        const int* tab = table ? table + (i64)seq[base + r0] * tcols : 0;
        tc_tile<D>(tc_smem, lim, dst, dstride, q, qstride, k, kstride, v, vstride, pos, G, kvh, scale, tab, bs,
                   base + r0, r1 - r0);
        __syncthreads();  // lim and the Q tile are read
    }
}

// q [n, nhead*D] F32 (row stride qstride floats); k, v F16 rows of kstride, vstride
// halves; dst [n, nhead*D] F32; table I32 [seqs, tcols] or null; seq I32 [n]. hd and vhd
// are D (the other attention kernels' arguments); n is the rows, zs the blocks a chunk.
#define TC_KERNEL(D)                                                                                                    \
    extern "C" __global__ void __launch_bounds__(TC_THREADS)                                                            \
        attention_tc##D(float* dst, i64 dstride, const float* q, i64 qstride, const uint16_t* k, i64 kstride,           \
                        const uint16_t* v, i64 vstride, const int* pos, int nhead, int nkv, int hd, int vhd,            \
                        float scale, const int* table, int tcols, const int* seq, int bs, int n, int zs) {              \
        pdl_entry();                                                                                                    \
        attention_tc<D>(dst, dstride, q, qstride, k, kstride, v, vstride, pos, nhead, nkv, scale, table, tcols, seq, \
                        bs, n, zs);                                                                                     \
    }
TC_KERNEL(64)
TC_KERNEL(128)
