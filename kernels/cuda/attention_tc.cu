// attention_tc.cu: causal attention for many query rows (prefill) on tensor cores, with
// the numbers of attention_smem and the reference: s_t = (f16(q) . K_t) * scale over the
// row's positions 0..pos, M the exact max, L the sum of expf(s_t - M), p_t =
// f16(expf(s_t - M) * (1/L)) and out = sum of p_t * V_t. Both products are f16 mma.sync
// (m16n8k16) with f32 accumulation, so only the order of the sums differs. An online
// softmax would round p against a running max, so each tile of queries takes two passes
// over its keys: pass 1 finds every query's max and sum, pass 2 computes the scores again
// (the same instructions, so the same floats) and accumulates P V.
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

// tc_mma: c += a * b, f16 inputs, f32 accumulators (A 16x16 row-major, B 16x8).
__device__ __forceinline__ void tc_mma(float* c, const uint32_t* a, uint32_t b0, uint32_t b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// tc_ldsm loads four 8x8 matrices of halves from shared memory (lanes 8j..8j+7 give the
// row addresses of matrix j); tc_ldsm_t loads them transposed.
__device__ __forceinline__ void tc_ldsm(uint32_t* r, const void* p) {
    const uint32_t a = (uint32_t)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
}

__device__ __forceinline__ void tc_ldsm_t(uint32_t* r, const void* p) {
    const uint32_t a = (uint32_t)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
}

// tc_cp16 copies 16 bytes from global to shared memory asynchronously, or writes zeros
// when !ok (src must still be a valid address).
__device__ __forceinline__ void tc_cp16(void* dst, const void* src, bool ok) {
    const uint32_t d = (uint32_t)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src), "r"(ok ? 16 : 0) : "memory");
}

__device__ __forceinline__ void tc_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }

__device__ __forceinline__ void tc_wait1() { asm volatile("cp.async.wait_group 1;" ::: "memory"); }

// tc_off is the byte offset of 16-byte chunk c of row r in a tile of rows of D halves:
// the low three bits of the chunk index are XORed with r%8, so that 8 consecutive rows
// at one chunk lie in distinct banks.
template <int D>
__device__ __forceinline__ int tc_off(int r, int c) {
    return r * (2 * D) + ((c ^ (r & 7)) << 4);
}

__device__ __forceinline__ i64 tc_row(const int* tab, int bs, int t) {
    return tab ? (i64)tab[t / bs] * bs + t % bs : (i64)t;
}

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

// tc_prob is a score's probability rounded to f16, as the reference rounds it.
__device__ __forceinline__ uint32_t tc_prob(float s, float m, float inv) { return f2h(expf(s - m) * inv); }

// tc_tile computes the attention of nr rows of one sequence from row row0 (at most
// TC_Q/G), every query head of KV head kvh.
template <int D>
__device__ __forceinline__ void tc_tile(uint8_t* smem, int* lim, float* dst, i64 dstride, const float* q, i64 qstride,
                                        const uint16_t* k, i64 kstride, const uint16_t* v, i64 vstride, const int* pos,
                                        int G, int kvh, float scale, const int* tab, int bs, int row0, int nr) {
    uint8_t* qsm = smem;                   // [TC_Q][D]
    uint8_t* ksm = qsm + 2 * TC_Q * D;     // [2][TC_K][D]
    uint8_t* vsm = ksm + 4 * TC_K * D;     // [2][TC_K][D]
    const int stage = 2 * TC_K * D;        // bytes of a tile
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
            float x0 = -INFINITY, x1 = -INFINITY;
#pragma unroll
            for (int j = 0; j < TC_K / 8; j++) {
                x0 = fmaxf(x0, fmaxf(sc[j][0], sc[j][1]));
                x1 = fmaxf(x1, fmaxf(sc[j][2], sc[j][3]));
            }
            x0 = fmaxf(x0, __shfl_xor_sync(0xffffffffu, x0, 1));
            x0 = fmaxf(x0, __shfl_xor_sync(0xffffffffu, x0, 2));
            x1 = fmaxf(x1, __shfl_xor_sync(0xffffffffu, x1, 1));
            x1 = fmaxf(x1, __shfl_xor_sync(0xffffffffu, x1, 2));
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
    float o[D / 8][4];
#pragma unroll
    for (int j = 0; j < D / 8; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) o[j][e] = 0;
    tc_load<D>(ksm, k, kstride, kvh, tab, bs, 0, nkeys);
    tc_load<D>(vsm, v, vstride, kvh, tab, bs, 0, nkeys);
    tc_commit();
    for (int it = 0; it < ntile; it++) {
        if (it + 1 < ntile) {
            const int t0 = (it + 1) * TC_K, off = ((it + 1) & 1) * stage;
            tc_load<D>(ksm + off, k, kstride, kvh, tab, bs, t0, nkeys);
            tc_load<D>(vsm + off, v, vstride, kvh, tab, bs, t0, nkeys);
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
            const uint8_t* vs = vsm + (it & 1) * stage;
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
        __syncthreads();
    }

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

// attention_mla: latent attention (DeepSeek's MLA with the key up-projection absorbed)
// of the model's head-major rows: row h*n+i is head h of token i, every head of a token
// at one position of one sequence and all attending over that token's latent rows (one
// KV head, V the same rows as K). The other kernels read a token's latent rows once per
// head; here a block takes 16 heads of one token (an m16 tile) and reads each row once
// per pass, with the numbers of attention_tc (two passes: max and sum, then the
// probabilities rounded to f16 and P V), f16 mma with f32 accumulation.
//
// A block of 4 warps; key positions in tiles of MLA_K, copied to shared memory with
// cp.async (two tiles in flight, rows swizzled as tc_off). Scores: warp w takes
// positions 8w..8w+7 of a tile for the 16 heads; each warp keeps its share of every
// head's max and sum, and the warps' shares meet in shared memory after pass 1. P V:
// the tile's probabilities go through shared memory (16 x MLA_K halves) and warp w
// accumulates output dims [D/4*w, D/4*(w+1)).
//
// Grid (n, ceil(H/16)). Dynamic shared memory: 16*D + 2*MLA_K*D halves and the P tile
// (16 rows of MLA_PLD bytes). D is 576 (64 rope + 512 latent dims).
#define MLA_D 576
#define MLA_K 32
#define MLA_THREADS 128
#define MLA_PLD 80  // bytes of a P row: 64 padded so that ldmatrix's eight rows miss each other's banks

__device__ __forceinline__ void mla_load(uint8_t* sm, const uint16_t* k, i64 kstride, const int* tab, int bs, int t0,
                                         int nkeys) {
    for (int e = threadIdx.x; e < MLA_K * (MLA_D / 8); e += MLA_THREADS) {
        const int r = e / (MLA_D / 8), c = e % (MLA_D / 8), t = t0 + r;
        const bool ok = t < nkeys;
        tc_cp16(sm + tc_off<MLA_D>(r, c), ok ? k + tc_row(tab, bs, t) * kstride + 8 * c : k, ok);
    }
}

// mla_scores: warp w's scaled scores of positions t0+8w .. t0+8w+7 (accumulator e: head
// row g (e < 2) or g+8, position t0 + 8w + 2*(lane%4) + e%2), -inf from nkeys on.
__device__ __forceinline__ void mla_scores(float* sc, const uint8_t* qsm, const uint8_t* ks, int t0, int nkeys,
                                           float scale) {
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
#pragma unroll
    for (int e = 0; e < 4; e++) sc[e] = 0;
#pragma unroll 6
    for (int kk = 0; kk < MLA_D / 16; kk += 2) {
        uint32_t a0[4], a1[4], b[4];
        tc_ldsm(a0, qsm + tc_off<MLA_D>(lane & 15, 2 * kk + (lane >> 4)));
        tc_ldsm(a1, qsm + tc_off<MLA_D>(lane & 15, 2 * kk + 2 + (lane >> 4)));
        tc_ldsm(b, ks + tc_off<MLA_D>(8 * w + (lane & 7), 2 * kk + (lane >> 3)));
        tc_mma(sc, a0, b[0], b[1]);
        tc_mma(sc, a1, b[2], b[3]);
    }
    const int t = t0 + 8 * w + 2 * (lane & 3);
#pragma unroll
    for (int e = 0; e < 4; e++) sc[e] = t + (e & 1) < nkeys ? sc[e] * scale : -INFINITY;
}

extern "C" __global__ void __launch_bounds__(MLA_THREADS)
attention_mla(float* dst, i64 dstride, const float* q, i64 qstride, const uint16_t* k, i64 kstride, const int* pos,
              float scale, const int* table, int tcols, const int* seq, int bs, int n, int H) {
    pdl_entry();
    extern __shared__ __align__(16) uint8_t mla_smem[];
    __shared__ float stat[4][16][2];  // each warp's (max, sum) of each head row
    uint8_t* qsm = mla_smem;                         // [16][D]
    uint8_t* ksm = qsm + 2 * 16 * MLA_D;             // [2][MLA_K][D]
    uint8_t* psm = ksm + 2 * 2 * MLA_K * MLA_D;      // [16][MLA_PLD bytes]
    const int stage = 2 * MLA_K * MLA_D;
    const int i = blockIdx.x, h0 = 16 * blockIdx.y;
    const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5, g = lane >> 2, tig = lane & 3;
    const int nkeys = pos[i] + 1;
    const int* tab = table ? table + (i64)seq[i] * tcols : 0;
    const int ntile = (nkeys + MLA_K - 1) / MLA_K;
    mla_load(ksm, k, kstride, tab, bs, 0, nkeys);
    tc_commit();
    for (int e = tid; e < 16 * (MLA_D / 8); e += MLA_THREADS) {
        const int r = e / (MLA_D / 8), c = e % (MLA_D / 8);
        uint32_t hv[4] = {0, 0, 0, 0};
        if (h0 + r < H) {
            const float* src = q + (i64)((h0 + r) * n + i) * qstride + 8 * c;
#pragma unroll
            for (int j = 0; j < 4; j++) hv[j] = f2h(src[2 * j]) | ((uint32_t)f2h(src[2 * j + 1]) << 16);
        }
        *(uint4*)(qsm + tc_off<MLA_D>(r, c)) = make_uint4(hv[0], hv[1], hv[2], hv[3]);
    }

    // Pass 1: this warp's max m and sum s (against m) of head rows g and g+8.
    float m0 = -INFINITY, m1 = -INFINITY, s0 = 0, s1 = 0;
    for (int it = 0; it < ntile; it++) {
        if (it + 1 < ntile) mla_load(ksm + ((it + 1) & 1) * stage, k, kstride, tab, bs, (it + 1) * MLA_K, nkeys);
        tc_commit();
        tc_wait1();
        __syncthreads();
        float sc[4];
        mla_scores(sc, qsm, ksm + (it & 1) * stage, it * MLA_K, nkeys, scale);
        float x0 = fmaxf(sc[0], sc[1]), x1 = fmaxf(sc[2], sc[3]);
        x0 = fmaxf(x0, __shfl_xor_sync(0xffffffffu, x0, 1));
        x0 = fmaxf(x0, __shfl_xor_sync(0xffffffffu, x0, 2));
        x1 = fmaxf(x1, __shfl_xor_sync(0xffffffffu, x1, 1));
        x1 = fmaxf(x1, __shfl_xor_sync(0xffffffffu, x1, 2));
        if (x0 > -INFINITY) {  // the warp's positions of this tile are not all past the end
            const float n0 = fmaxf(m0, x0), n1 = fmaxf(m1, x1);
            s0 = s0 * expf(m0 - n0) + expf(sc[0] - n0) + expf(sc[1] - n0);
            s1 = s1 * expf(m1 - n1) + expf(sc[2] - n1) + expf(sc[3] - n1);
            m0 = n0;
            m1 = n1;
        }
        __syncthreads();
    }
    s0 += __shfl_xor_sync(0xffffffffu, s0, 1);
    s0 += __shfl_xor_sync(0xffffffffu, s0, 2);
    s1 += __shfl_xor_sync(0xffffffffu, s1, 1);
    s1 += __shfl_xor_sync(0xffffffffu, s1, 2);
    if (tig == 0) {
        stat[w][g][0] = m0, stat[w][g][1] = s0;
        stat[w][g + 8][0] = m1, stat[w][g + 8][1] = s1;
    }
    mla_load(ksm, k, kstride, tab, bs, 0, nkeys);
    tc_commit();
    __syncthreads();
    float M0 = -INFINITY, M1 = -INFINITY, L0 = 0, L1 = 0;
#pragma unroll
    for (int j = 0; j < 4; j++) M0 = fmaxf(M0, stat[j][g][0]), M1 = fmaxf(M1, stat[j][g + 8][0]);
#pragma unroll
    for (int j = 0; j < 4; j++) {
        if (stat[j][g][0] > -INFINITY) L0 += stat[j][g][1] * expf(stat[j][g][0] - M0);
        if (stat[j][g + 8][0] > -INFINITY) L1 += stat[j][g + 8][1] * expf(stat[j][g + 8][0] - M1);
    }
    const float inv0 = 1.0f / L0, inv1 = 1.0f / L1;

    // Pass 2: the scores again, their probabilities into the P tile, and P V.
    float o[MLA_D / 32][4];
#pragma unroll
    for (int j = 0; j < MLA_D / 32; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) o[j][e] = 0;
    for (int it = 0; it < ntile; it++) {
        if (it + 1 < ntile) mla_load(ksm + ((it + 1) & 1) * stage, k, kstride, tab, bs, (it + 1) * MLA_K, nkeys);
        tc_commit();
        tc_wait1();
        __syncthreads();
        const uint8_t* ks = ksm + (it & 1) * stage;
        float sc[4];
        mla_scores(sc, qsm, ks, it * MLA_K, nkeys, scale);
        const int col = 16 * w + 4 * tig;  // byte offset of positions 8w + 2*tig, +1
        *(uint32_t*)(psm + g * MLA_PLD + col) = tc_prob(sc[0], M0, inv0) | (tc_prob(sc[1], M0, inv0) << 16);
        *(uint32_t*)(psm + (g + 8) * MLA_PLD + col) = tc_prob(sc[2], M1, inv1) | (tc_prob(sc[3], M1, inv1) << 16);
        __syncthreads();
#pragma unroll
        for (int c = 0; c < MLA_K / 16; c++) {
            uint32_t pa[4];
            tc_ldsm(pa, psm + (lane & 15) * MLA_PLD + 32 * c + 16 * (lane >> 4));
#pragma unroll
            for (int jj = 0; jj < MLA_D / 64; jj++) {
                uint32_t b[4];
                tc_ldsm_t(b, ks + tc_off<MLA_D>(16 * c + (lane & 7) + (((lane >> 3) & 1) << 3),
                                                (MLA_D / 32) * w + 2 * jj + (lane >> 4)));
                tc_mma(o[2 * jj], pa, b[0], b[1]);
                tc_mma(o[2 * jj + 1], pa, b[2], b[3]);
            }
        }
        __syncthreads();
    }
    asm volatile("cp.async.wait_all;" ::: "memory");
    // Head rows g and g+8, dims D/4*w + 8j + 2*(lane%4) and the next.
    const int ha = h0 + g, hb = ha + 8, d0 = (MLA_D / 4) * w + 2 * tig;
#pragma unroll
    for (int j = 0; j < MLA_D / 32; j++) {
        if (ha < H) *(float2*)(dst + (i64)(ha * n + i) * dstride + d0 + 8 * j) = make_float2(o[j][0], o[j][1]);
        if (hb < H) *(float2*)(dst + (i64)(hb * n + i) * dstride + d0 + 8 * j) = make_float2(o[j][2], o[j][3]);
    }
}
