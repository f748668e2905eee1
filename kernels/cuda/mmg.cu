// mmg.cu: products of up to 64 activation rows (decode of many sequences) over Q4_K
// weights on Hopper's warpgroup tensor instructions (wgmma; this module is compiled for
// sm_90a and loads only there: inference/backend/cuda/mmg.go).
//
// dst[n, r] = dot(w[r, :], x[n, :]) with each weight q * d1 - m1 in one f16 fma of the
// sub-block's f16 scale d1 = f16(d*sc) and min m1 = f16(dmin*m) (mmf's weights; the f16
// copies of f16copy.go hold f16(d*sc*q - dmin*m), one rounding fewer) and x the f16
// activation rows cuBLASLt would take (act_f16 of the Q8_K-rounded values), f32 sums,
// from 1.1 times Q4_K's bytes.
//
// A block is two warpgroups, 128 weight rows x 64 activation rows; K in steps of 256.
// Each step's operands come in one stage of shared memory by two bulk copies (thread 0
// issues them; they complete on the stage's mbarrier): the weights from a packed copy
// (mmg_pack_q4_k) and the activation rows from a copy already in the stage's layout
// (mmg_xl). Per-thread 16-byte copies of the same bytes were the bound of this product
// (build/micro/wg.cu: 41 us for 14336x4096 with no tensor work at all, against 22 us for
// the whole product with bulk copies). Each warp dequantizes its 16 rows into wgmma's A
// fragments in registers; the tensor cores read the activations (B) from shared memory
// by descriptor: no-swizzle K-major core matrices (8 rows x 16 bytes, 128 contiguous
// bytes; the next in K 128 bytes on, the next 8 rows 4 KiB on).
//
// The packed copy, per tile of 128 rows and step, a row's MG_RB bytes: sub-block j's f16
// pair (d1, -m1) at 4j, then four 32-byte pieces, one per lane c = lane % 4,
// holding that lane's quants of the step: word i, byte 2h + j has in its low nibble
// element 16(2i + h) + 2c + j and in its high nibble the same + 8 (m16n8k16's A fragment
// of k16 block 2i + h), so a lane's quants of a row are two 16-byte loads a step.
#include "common.cuh"

#define MG_TM 128                // weight rows a block
#define MG_TN 64                 // activation rows a block
#ifndef MG_RB
#define MG_RB 160  // packed bytes of a row a step: 192 leaves each pair 8 bytes, both halves
#endif             // duplicated (d1, d1) and (-m1, -m1)
#define MG_QO (MG_RB - 128)      // where a row's quants start
#define MG_WS (MG_TM * MG_RB)    // a stage's weights (20 KiB)
#define MG_XS (MG_TN * 256 * 2)  // a stage's activations (32 KiB)
#ifndef MG_STAGES
#define MG_STAGES 2  // stages of shared memory (mmg.go's mgStages)
#endif
#ifndef MG_GROUPS
#define MG_GROUPS 4  // wgmma commit groups a step (1, 2, 4 or 8)
#endif
#ifndef MG_MINB
#define MG_MINB 2  // blocks an SM (__launch_bounds__)
#endif

// mmg_pack_q4_k writes the packed copy P of M rows of Q4_K weights W (nb steps a row):
// 16-byte chunk ch of row r of tile t and step s at ((t nb + s) MG_TM + r) MG_RB + 16 ch,
// rows past M zeros. Chunks below MG_QO / 16: the sub-blocks' pairs; then lane c's words
// 4u..4u+3 at chunk MG_QO / 16 + 2c + u.
extern "C" __global__ void mmg_pack_q4_k(const uint8_t* W, i64 wstride, int M, int nb, uint8_t* P) { pdl_entry();
    constexpr int CH = MG_RB / 16;
    const i64 total = (i64)((M + MG_TM - 1) / MG_TM) * nb * MG_TM * CH;
    for (i64 e = blockIdx.x * (i64)blockDim.x + threadIdx.x; e < total; e += (i64)gridDim.x * blockDim.x) {
        const int ch = (int)(e % CH);
        const i64 q = e / CH;
        const int row = (int)(q / ((i64)nb * MG_TM)) * MG_TM + (int)(q % MG_TM), s = (int)(q / MG_TM % nb);
        uint32_t v[4] = {0, 0, 0, 0};
        if (row < M) {
            const uint8_t* b = W + (i64)row * wstride + 144 * s;
            if (ch < MG_QO / 16) {
                const float d = ldh(b), dmin = ldh(b + 2);
                constexpr int PER = MG_RB == 192 ? 2 : 4;  // sub-blocks a chunk (8 or 4 bytes each)
                for (int k = 0; k < PER; k++) {
                    int sc, m;
                    scale_min_k4(PER * ch + k, b + 4, &sc, &m);
                    const uint32_t d1 = f2h(d * (float)sc), m1 = f2h(-(dmin * (float)m));
#if MG_RB == 192
                    v[2 * k] = d1 | d1 << 16, v[2 * k + 1] = m1 | m1 << 16;
#else
                    v[k] = d1 | m1 << 16;
#endif
                }
            } else {
                const int c = (ch - MG_QO / 16) / 2, u = (ch - MG_QO / 16) % 2;
                for (int w = 0; w < 4; w++) {
                    const int i = 4 * u + w;
                    uint32_t x = 0;
                    for (int h = 0; h < 2; h++)
                        for (int j = 0; j < 2; j++) {
                            const int e0 = 16 * (2 * i + h) + 2 * c + j;
                            x |= (uint32_t)(q4k_at(b + 16, e0) | (q4k_at(b + 16, e0 + 8) << 4)) << (8 * (2 * h + j));
                        }
                    v[w] = x;
                }
            }
        }
        *(uint4*)(P + 16 * e) = make_uint4(v[0], v[1], v[2], v[3]);
    }
}

// mmg_xl writes the N f16 activation rows xh (xstride bytes apart, K elements) in the
// stage layout, a step (MG_XS bytes) after another, rows N..63 zeros: row n's elements
// 8kc..8kc+7 of step s at s MG_XS + ((n / 8) 32 + kc) 128 + (n % 8) 16.
extern "C" __global__ void mmg_xl(const uint8_t* xh, i64 xstride, int N, int K, uint8_t* XL) { pdl_entry();
    const int nc = K / 8;
    for (int q = blockIdx.x * blockDim.x + threadIdx.x; q < MG_TN * nc; q += gridDim.x * blockDim.x) {
        const int n = q / nc, kk = q % nc, s = kk / 32, kc = kk % 32;
        const uint4 v = n < N ? *(const uint4*)(xh + (i64)n * xstride + 16 * kk) : make_uint4(0, 0, 0, 0);
        *(uint4*)(XL + (i64)s * MG_XS + (((n >> 3) * 32 + kc) << 7) + ((n & 7) << 4)) = v;
    }
}

__device__ __forceinline__ uint4 mg_lds128(uint32_t a) {
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(a));
    return v;
}

// mg_deq2: the f16 pair (low half first) of quants byte k0 and k1 of v (values 0..15):
// each q * d1 - m1 in one f16 fma (d1: the sub-block's scale in both halves, m1 its
// negated min likewise), q made f16 from its byte exactly (0x6400 | q is 1024 + q). Three
// instructions a pair; session 31's f32 form (quant's value rounded once) took seven,
// and their issue was what mmg waited on (session 32, ncu's stall samples: selected,
// not selected, dispatch and math-pipe throttle two thirds of them).
__device__ __forceinline__ uint32_t mg_deq2(uint32_t v, int k0, int k1, uint32_t d1, uint32_t m1) {
    const uint32_t p = __byte_perm(v, 0x64646464u, 0x4040 | k0 | k1 << 8);
    const __half2 k = __half2half2(__ushort_as_half(0x6400));
    const __half2 w = __hfma2(__hsub2(*(const __half2*)&p, k), *(const __half2*)&d1, *(const __half2*)&m1);
    return *(const uint32_t*)&w;
}

// mg_pair: sub-block i's (d1, m1), each in both halves, of the row at ra.
__device__ __forceinline__ uint2 mg_pair(uint32_t ra, int i) {
    uint2 v;
#if MG_RB == 192
    asm volatile("ld.shared.v2.u32 {%0,%1}, [%2];" : "=r"(v.x), "=r"(v.y) : "r"(ra + 8 * i));
#else
    uint32_t p;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(p) : "r"(ra + 4 * i));
    const __half2 h = *(const __half2*)&p, lo = __low2half2(h), hi = __high2half2(h);
    v.x = *(const uint32_t*)&lo, v.y = *(const uint32_t*)&hi;
#endif
    return v;
}

__device__ __forceinline__ void mg_fence_acc(float* d) {
#pragma unroll
    for (int i = 0; i < 32; i++) asm volatile("" : "+f"(d[i])::"memory");
}

// mg_mma: d += A (a warpgroup's 64 x 16 fragment in registers) x B (16 x 64 by descriptor).
__device__ __forceinline__ void mg_mma(float* d, const uint32_t* a, uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31},"
        " {%32,%33,%34,%35}, %36, p, 1, 1, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
          "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
          "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
          "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(1));
}

__device__ __forceinline__ void mg_wait(uint32_t bar, uint32_t parity) {
    asm volatile(
        "{\n.reg .pred p;\nMG_WAIT_%=:\nmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra MG_WAIT_%=;\n}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
}

__device__ __forceinline__ void mg_bulk(uint32_t dst, const void* src, int bytes, uint32_t bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst), "l"(src),
                 "r"(bytes), "r"(bar)
                 : "memory");
}

// mmg_q4_k: the products of the N (<= 64) activation rows XL (mmg_xl) by one weight or
// two of the same K (P0, packed by mmg_pack_q4_k: its mt0 row tiles into D0, dstride0
// floats a row; P1: the blocks past them, into D1: a gate and up pair, in one launch).
// With gridDim.y > 1 splits of the K steps (one weight only), each split's partial sums
// go to part (split s: N rows of M0), and the last block of a row tile to finish
// (count: an int a tile, zero, and zero again after) adds them in split order into D0:
// mmq_reduce's sums, with no launch of its own. A split with no steps is never launched.
// early: the packed copies were made before the kernel before this one, so their first
// weights are requested before the wait for it.
extern "C" __global__ void __launch_bounds__(256, MG_MINB) mmg_q4_k(const uint8_t* __restrict__ P0, const uint8_t* __restrict__ P1, int mt0,
                                                           const uint8_t* __restrict__ XL, float* D0, float* D1, i64 dstride0,
                                                           i64 dstride1, int M0, int M1, int K, int N, float* part, int* count,
                                                           int early) { pdl_defer();
    extern __shared__ __align__(128) uint8_t mg_raw[];
    __shared__ __align__(8) uint64_t bars[MG_STAGES];
    const int tid = threadIdx.x, wg = tid >> 7, warp = (tid >> 5) & 3, lane = tid & 31, g = lane >> 2, c = lane & 3;
    const bool second = (int)blockIdx.x >= mt0;
    const int tile = second ? (int)blockIdx.x - mt0 : (int)blockIdx.x, M = second ? M1 : M0;
    float* D = second ? D1 : D0;
    const i64 dstride = second ? dstride1 : dstride0;
    const int nb = K / 256, splits = gridDim.y, per = (nb + splits - 1) / splits, s0 = blockIdx.y * per;
    const int steps = min(nb, s0 + per) - s0;
    const uint8_t* wt = (second ? P1 : P0) + (i64)tile * nb * MG_WS;
    const uint32_t base = (uint32_t)__cvta_generic_to_shared(mg_raw), bar0 = (uint32_t)__cvta_generic_to_shared(bars);
    auto stage = [](int st) { return (uint32_t)(st * (MG_WS + MG_XS)); };
    if (tid == 0) {
        for (int i = 0; i < MG_STAGES; i++) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar0 + 8 * i) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        for (int p = 0; p < MG_STAGES - 1 && p < steps; p++) {
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar0 + 8 * p), "r"(MG_WS + MG_XS) : "memory");
            if (early) mg_bulk(base + stage(p), wt + (i64)(s0 + p) * MG_WS, MG_WS, bar0 + 8 * p);
        }
    }
    pdl_wait();
    if (tid == 0)
        for (int p = 0; p < MG_STAGES - 1 && p < steps; p++) {
            if (!early) mg_bulk(base + stage(p), wt + (i64)(s0 + p) * MG_WS, MG_WS, bar0 + 8 * p);
            mg_bulk(base + stage(p) + MG_WS, XL + (i64)(s0 + p) * MG_XS, MG_XS, bar0 + 8 * p);
        }
    __syncthreads();  // the barriers' initialization is seen by every thread
    float acc[32];
#pragma unroll
    for (int i = 0; i < 32; i++) acc[i] = 0.f;
    for (int j = 0; j < steps; j++) {
        if (j > 0) __syncthreads();  // every thread is done with the stage refilled next
        if (tid == 0 && j + MG_STAGES - 1 < steps) {
            const int st = (j + MG_STAGES - 1) % MG_STAGES, s = s0 + j + MG_STAGES - 1;
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar0 + 8 * st), "r"(MG_WS + MG_XS) : "memory");
            mg_bulk(base + stage(st), wt + (i64)s * MG_WS, MG_WS, bar0 + 8 * st);
            mg_bulk(base + stage(st) + MG_WS, XL + (i64)s * MG_XS, MG_XS, bar0 + 8 * st);
        }
        const int st = j % MG_STAGES;
        mg_wait(bar0 + 8 * st, (j / MG_STAGES) & 1);
        const uint32_t ws = base + stage(st), xs = ws + MG_WS;
        const uint32_t ra = ws + (wg * 64 + warp * 16 + g) * MG_RB, rb = ra + 8 * MG_RB;
        const uint4 qa0 = mg_lds128(ra + MG_QO + 32 * c), qa1 = mg_lds128(ra + MG_QO + 16 + 32 * c);
        const uint4 qb0 = mg_lds128(rb + MG_QO + 32 * c), qb1 = mg_lds128(rb + MG_QO + 16 + 32 * c);
        const uint32_t QA[8] = {qa0.x, qa0.y, qa0.z, qa0.w, qa1.x, qa1.y, qa1.z, qa1.w};
        const uint32_t QB[8] = {qb0.x, qb0.y, qb0.z, qb0.w, qb1.x, qb1.y, qb1.z, qb1.w};
        uint32_t A[16][4];
        mg_fence_acc(acc);
        // MG_GROUPS commit groups a step: a group's sub-blocks are dequantized while the
        // tensor cores work on the groups before it.
#pragma unroll
        for (int i0 = 0; i0 < 8; i0 += 8 / MG_GROUPS) {
#pragma unroll
            for (int i = i0; i < i0 + 8 / MG_GROUPS; i++) {
                const uint2 fa = mg_pair(ra, i), fb = mg_pair(rb, i);
                const uint32_t la = QA[i] & 0x0f0f0f0fu, ha = (QA[i] >> 4) & 0x0f0f0f0fu;
                const uint32_t lb = QB[i] & 0x0f0f0f0fu, hb = (QB[i] >> 4) & 0x0f0f0f0fu;
                A[2 * i][0] = mg_deq2(la, 0, 1, fa.x, fa.y), A[2 * i][1] = mg_deq2(lb, 0, 1, fb.x, fb.y);
                A[2 * i][2] = mg_deq2(ha, 0, 1, fa.x, fa.y), A[2 * i][3] = mg_deq2(hb, 0, 1, fb.x, fb.y);
                A[2 * i + 1][0] = mg_deq2(la, 2, 3, fa.x, fa.y), A[2 * i + 1][1] = mg_deq2(lb, 2, 3, fb.x, fb.y);
                A[2 * i + 1][2] = mg_deq2(ha, 2, 3, fa.x, fa.y), A[2 * i + 1][3] = mg_deq2(hb, 2, 3, fb.x, fb.y);
            }
            asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
            for (int t = 2 * i0; t < 2 * (i0 + 8 / MG_GROUPS); t++) {
                const uint32_t a = xs + 256 * t;  // k16 block t: two core matrices in K
                mg_mma(acc, A[t], (uint64_t)((a & 0x3ffff) >> 4) | ((uint64_t)(128 >> 4) << 16) | ((uint64_t)(4096 >> 4) << 32));
            }
            asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        }
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
        mg_fence_acc(acc);
    }
    const int r = tile * MG_TM + wg * 64 + warp * 16 + g;
    float* out = splits > 1 ? part + (i64)blockIdx.y * N * M : D;
    const i64 os = splits > 1 ? M : dstride;
#pragma unroll
    for (int jn = 0; jn < 8; jn++) {
        const int n = 8 * jn + 2 * c;
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int nn = n + (e & 1), rr = r + 8 * (e >> 1);
            if (nn < N && rr < M) out[(i64)nn * os + rr] = acc[4 * jn + e];
        }
    }
    if (splits == 1) return;
    // The last block of the tile to finish adds the splits' sums (as attention_split's).
    __shared__ int last;
    __threadfence();
    __syncthreads();
    if (tid == 0) last = atomicAdd(count + tile, 1) == splits - 1;
    __syncthreads();
    if (!last) return;
    __threadfence();
    if (tid == 0) count[tile] = 0;  // zero again for the next launch
    const int r0 = tile * MG_TM, rows = min(MG_TM, M - r0);
    const i64 total = (i64)N * M;
    // Four outputs a thread at once and the splits' sums of them four splits at a time,
    // all loads of a round issued before their adds: a round trip to L2 a round, not a
    // load (one at a time, the sums took longer than the product: 52 us at 4096x14336).
    constexpr int U = 4, Z = 4;
    for (int i0 = tid; i0 < N * MG_TM; i0 += 256 * U) {
        i64 at[U];
        int on[U], ol[U];  // the output's row and column in the tile
        float sum[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int idx = i0 + 256 * u, n = idx / MG_TM, rl = idx % MG_TM;
            on[u] = n, ol[u] = rl;
            at[u] = idx < N * MG_TM && rl < rows ? (i64)n * M + r0 + rl : -1;
            sum[u] = at[u] >= 0 ? __ldcg(part + at[u]) : 0.f;
        }
        for (int z0 = 1; z0 < splits; z0 += Z) {
            float t[Z][U];
#pragma unroll
            for (int z = 0; z < Z; z++)
#pragma unroll
                for (int u = 0; u < U; u++) t[z][u] = z0 + z < splits && at[u] >= 0 ? __ldcg(part + (z0 + z) * total + at[u]) : 0.f;
#pragma unroll
            for (int z = 0; z < Z; z++)
#pragma unroll
                for (int u = 0; u < U; u++)
                    if (z0 + z < splits) sum[u] += t[z][u];
        }
#pragma unroll
        for (int u = 0; u < U; u++)
            if (at[u] >= 0) D[(i64)on[u] * dstride + r0 + ol[u]] = sum[u];
    }
}
