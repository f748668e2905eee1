// attention_dec.cu: decode attention on the tensor cores for batches of many tokens,
// each token's query heads that read one KV head as one m16 tile (rows past the heads
// are zeros), so that a token's keys and values are read once per pass for all of them,
// with the numbers of attention_tc (two passes: each head's max and sum, then the
// probabilities rounded to f16 against them, as the reference rounds them, and P V), f16
// mma with f32 accumulation.
//
// attention_mla: DeepSeek's latent attention as the model issues it: head-major rows
// (row h*n+i is head h of token i), one KV head of D = 576 dims (64 rope + 512 latent)
// whose rows are also the values; a block takes 16 heads of a token. attention_decD: the
// G query heads of KV head kvh of token i (G <= 16, head dims D = 64 or 128, V its own
// rows).
//
// A block of 8 warps; key positions in tiles of DEC_K, copied to shared memory with
// cp.async (two tiles in flight, rows swizzled as tc_off). Scores: warp w takes
// positions 8w..8w+7 of a tile (four accumulator chains over the dims); each warp keeps
// its share of every head's max and sum, and the shares meet in shared memory after
// pass 1. P V: the tile's probabilities go through shared memory (16 x DEC_K halves);
// warp w accumulates output dims [D/4*(w%4), D/4*(w%4+1)) over the positions of half
// w/4 of the tile, and the two halves meet at the end.
//
// Dynamic shared memory (dec_smem): the f16 query tile, a ring of ns K tiles, a ring of
// ns V tiles unless V is K, and the P tile (16 rows of DEC_PLD bytes). With scap > 0
// (every row's positions at most scap) pass 1 also keeps its scores in shared memory (nr
// rows of scap + 8 floats after the P tile: the tile's rows past nr are zeros) and pass 2 reads them instead of computing
// them from the keys again: the keys are read once, and the V tiles take the K tiles'
// place. The tiles of both passes are one sequence of loads (pass 1's K tiles, then pass
// 2's), ns - 1 of them in flight while one is used: no load waits for a pass to end.
#include "attention_one.cuh"

// attention_mla: grid (n, ceil(H/16)); block y takes heads 16y.. of token x. k [rows,
// 576] F16 (kstride halves), the values the same rows; q and dst head-major [H*n, 576];
// scap as dec_attend's.
extern "C" __global__ void __launch_bounds__(DEC_THREADS)
attention_mla(float* dst, i64 dstride, const float* q, i64 qstride, const uint16_t* k, i64 kstride, const int* pos,
              float scale, const int* table, int tcols, const int* seq, int bs, int n, int H, int scap) {
    pdl_entry();
    extern __shared__ __align__(16) uint8_t dec_raw[];
    __shared__ float stat[DEC_THREADS / 32][16][2];
    const int i = blockIdx.x, h0 = 16 * blockIdx.y;
    const int* tab = table ? table + (i64)seq[i] * tcols : 0;
    const int nkeys = pos[i] + 1;
    dec_attend<576>(dec_raw, stat, dst + (i64)(h0 * n + i) * dstride, (i64)n * dstride, q + (i64)(h0 * n + i) * qstride,
                    (i64)n * qstride, min(16, H - h0), k, kstride, nullptr, 0, tab, bs, nkeys, scale, scap, 0,
                    (nkeys + DEC_K - 1) / DEC_K, 2, nullptr);
}

// attention_mla_split: attention_mla for a few tokens, each token's positions split over
// blocks in spans of tpb key tiles (DecSplit): grid (n, ceil(H/16) * S), block (i, y)
// takes heads 16 (y % hg).. of token i over span y / hg; the spans past a token's
// positions are idle. work holds each (token, head group)'s S x 16 statistics (float2)
// and S x 16 x 576 partial sums; count one counter a (token, head group), zero between
// launches. Every block of the grid must be resident at once (the host launches at most
// one an SM).
extern "C" __global__ void __launch_bounds__(DEC_THREADS)
attention_mla_split(float* dst, i64 dstride, const float* q, i64 qstride, const uint16_t* k, i64 kstride,
                    const int* pos, float scale, const int* table, int tcols, const int* seq, int bs, int n, int H,
                    int scap, float* work, int* count, int S, int tpb) {
    pdl_entry();
    extern __shared__ __align__(16) uint8_t dec_raw[];
    __shared__ float stat[DEC_THREADS / 32][16][2];
    const int hg = (H + 15) / 16, i = blockIdx.x, grp = blockIdx.y % hg, c = blockIdx.y / hg, h0 = 16 * grp;
    const int nkeys = pos[i] + 1, span = tpb * DEC_K, tb = c * span;
    if (tb >= nkeys) return;
    const int* tab = table ? table + (i64)seq[i] * tcols : 0;
    const i64 u = (i64)i * hg + grp;  // this (token, head group)
    float2* stats = (float2*)work + u * S * 16;
    float* part = work + 2 * (i64)n * hg * S * 16 + u * S * 16 * 576;
    const DecSplit sp = {stats, part, count + u, c, (nkeys + span - 1) / span};
    dec_attend<576>(dec_raw, stat, dst + (i64)(h0 * n + i) * dstride, (i64)n * dstride, q + (i64)(h0 * n + i) * qstride,
                    (i64)n * qstride, min(16, H - h0), k, kstride, nullptr, 0, tab, bs, nkeys, scale, scap, tb,
                    (min(nkeys, tb + span) - tb + DEC_K - 1) / DEC_K, 2, &sp);
}

// attention_decD (DEC_ARGS: attention_one.cuh): grid (n, nkv); block (i, kvh) takes the G = nhead/nkv query heads of
// KV head kvh of row i. The common attention arguments (attention.cu); hd = vhd = D;
// scap and ns (2 to 4) as dec_attend's; with q8, the output also rounded to Q8_K rows
// (q8stride bytes apart), and with q8h their values in f16 rows too (q8hstride bytes). Registers for four blocks an SM (decBlocks
// sizes the shared memory for as many as make the grid one wave). attention_decD_q8
// rounds its output to Q8_0 (s1: Q8_1) where attention_decD rounds to Q8_K: a kernel of
// its own, so that the Q8_K kernel's code is what it was without it (a runtime choice
// made Llama-3.1-8B's Q4_K_M tg128 ~2% slower on the H200).
#define DEC_BODY(D, Q8T)                                                                                                \
    extern __shared__ __align__(16) uint8_t dec_raw[];                                                                  \
    __shared__ float stat[DEC_THREADS / 32][16][2];                                                                     \
    const int i = blockIdx.x, kvh = blockIdx.y, G = nhead / nkv;                                                        \
    const int* tab = table ? table + (i64)seq[i] * tcols : 0;                                                           \
    dec_attend<D, true>(dec_raw, stat, dst + (i64)i * dstride + (i64)kvh * G * D, D, q + (i64)i * qstride + (i64)kvh * G * D,  \
                  D, G, k + kvh * D, kstride, v + kvh * D, vstride, tab, bs, pos[i] + 1, scale, scap, 0,              \
                  (pos[i] + DEC_K) / DEC_K, ns, nullptr, q8 ? q8 + (i64)i * q8stride : nullptr,                       \
                  kvh * G * D / ((Q8T) ? 32 : 256), nhead * D, (Q8T),                                            \
                  q8h && !(Q8T) ? (uint16_t*)(q8h + (i64)i * q8hstride) : nullptr);
#define DEC_KERNEL(D)                                                                                                   \
    extern "C" __global__ void __launch_bounds__(DEC_THREADS, 4) attention_dec##D(DEC_ARGS) {                           \
        pdl_defer();                                                                                                    \
        DEC_BODY(D, 0)                                                                                                  \
    }                                                                                                                   \
    extern "C" __global__ void __launch_bounds__(DEC_THREADS, 4) attention_dec##D##_q8(DEC_ARGS, int s1) {              \
        pdl_defer();                                                                                                    \
        DEC_BODY(D, 1 + s1)                                                                                             \
    }
DEC_KERNEL(64)
DEC_KERNEL(128)

// attention_decD_1(_q8): attention_decD's arguments (DEC_ARGS) and grid (1, nkv), 128
// threads, one row (i = 0), a1_smem(D, 256) bytes of dynamic shared memory; scap and ns
// unused. attention_decD_1_128 and _1_64 (and their _q8 twins) the same for at most 128
// and 64 positions, a1_smem(D, 128) and a1_smem(D, 64) bytes.
#define A1_BODY(D, Q80, S1, CAP)                                                                                        \
    const int kvh = blockIdx.y, G = nhead / nkv;                                                                        \
    const int* tab = table ? table + (i64)seq[0] * tcols : 0;                                                           \
    dec1_attend<D, Q80, CAP>(dst + (i64)kvh * G * D, q + (i64)kvh * G * D, k + kvh * D, (int)kstride, v + kvh * D,     \
                             (int)vstride, tab, bs, pos[0] + 1, G, scale, q8, kvh * G * D / (Q80 ? 32 : 256),          \
                             nhead * D, q8h && !Q80 ? (uint16_t*)q8h : nullptr, S1);
#define A1_KERNEL(D, CAP, NAME)                                                                                         \
    extern "C" __global__ void __launch_bounds__(128) NAME(DEC_ARGS) {                                                  \
        pdl_defer();                                                                                                    \
        A1_BODY(D, false, 0, CAP)                                                                                       \
    }                                                                                                                   \
    extern "C" __global__ void __launch_bounds__(128) NAME##_q8(DEC_ARGS, int s1) {                                     \
        pdl_defer();                                                                                                    \
        A1_BODY(D, true, s1, CAP)                                                                                       \
    }
A1_KERNEL(64, A1_N, attention_dec64_1)
A1_KERNEL(64, 128, attention_dec64_1_128)
A1_KERNEL(64, 64, attention_dec64_1_64)
A1_KERNEL(128, A1_N, attention_dec128_1)
A1_KERNEL(128, 128, attention_dec128_1_128)
A1_KERNEL(128, 64, attention_dec128_1_64)

// attention_decD_1c(_q8), _1c_128, _1c_64: the same over up to A1_CL times the form's
// positions, grid (rows, nkv * A1_CL), a row's KV head's A1_CL blocks one cluster
// (dec1_attend with CL). Several rows only where each is its sequence's one new
// position (the host's Attention.OneNew): a block copies the older rows before its wait.
#define A1C_BODY(D, Q80, S1, CAP)                                                                                       \
    const int i = blockIdx.x, kvh = blockIdx.y / A1_CL, G = nhead / nkv;                                                \
    const int* tab = table ? table + (i64)seq[i] * tcols : 0;                                                           \
    dec1_attend<D, Q80, CAP, A1_CL>(dst + (i64)i * dstride + (i64)kvh * G * D, q + (i64)i * qstride + (i64)kvh * G * D, \
                                    k + kvh * D, (int)kstride, v + kvh * D, (int)vstride, tab, bs, pos[i] + 1, G,      \
                                    scale, q8 ? q8 + (i64)i * q8stride : nullptr, kvh * G * D / (Q80 ? 32 : 256),       \
                                    nhead * D, q8h && !Q80 ? (uint16_t*)(q8h + (i64)i * q8hstride) : nullptr, S1);
// A cluster a KV head: Hopper only (EM_SM90); compute capability 8.x has attention_decD_1.
#if EM_SM90
#define A1C_KERNEL(D, CAP, NAME)                                                                                        \
    extern "C" __global__ void __cluster_dims__(1, A1_CL, 1) __launch_bounds__(128) NAME(DEC_ARGS) {                  \
        pdl_defer();                                                                                                    \
        A1C_BODY(D, false, 0, CAP)                                                                                      \
    }                                                                                                                   \
    extern "C" __global__ void __cluster_dims__(1, A1_CL, 1) __launch_bounds__(128) NAME##_q8(DEC_ARGS, int s1) {     \
        pdl_defer();                                                                                                    \
        A1C_BODY(D, true, s1, CAP)                                                                                      \
    }
#else
#define A1C_KERNEL(D, CAP, NAME)
#endif
A1C_KERNEL(64, A1_N, attention_dec64_1c)
A1C_KERNEL(64, 128, attention_dec64_1c_128)
A1C_KERNEL(64, 64, attention_dec64_1c_64)
A1C_KERNEL(128, A1_N, attention_dec128_1c)
A1C_KERNEL(128, 128, attention_dec128_1c_128)
A1C_KERNEL(128, 64, attention_dec128_1c_64)
