// attention_short.cu: decode attention of a few rows over short contexts, built for
// latency. A decode step of one token over at most a few hundred positions is a chain of
// dependent round trips, not a stream of bytes: attention_smem and the split kernels
// walk the rows a warp (or a few positions) at a time, each step a block-table read and
// then the row's load, ~17 us a Llama-3.1-8B layer at under 128 positions.
//
// Here one block (SH_THREADS, or 512 for attention_short576w) per (query row, KV head)
// takes the row's whole context: its cache rows are looked up at once (a position a
// thread), then every K and V row of a tile of cap positions is copied into shared memory
// at once (by cp.async, K and V as two groups, so that V arrives while the K tile is
// scored; MLA's latent rows by bulk copies, a thread a row, which also leave the kernel
// before more of the SM while the rows before the newest are copied ahead of the wait),
// so that the latency is that of a few round trips whatever the length. The scores stay
// in shared memory; the probabilities are rounded to f16 against the row's max and sum as
// attention_smem and the reference round them (exact two passes, no rescaling), then
// summed against V. Rows longer than cap positions take several tiles (V read again); the
// host keeps them short (attention_short.go).
//
// HD: the K head (64, 128, or 576: MLA's latent row, whose V is the K row itself, KV1);
// VHD the V head. Grid (rows, nkv); dynamic shared memory (attention_short.go,
// shortSmem): the K tile (cap rows of 2*HD bytes), the V tile unless KV1, the group's
// query (G*HD floats), the scores (G*scap floats, scap >= every row's length) and the
// partial sums (groups x G*VHD floats). Each head's output row leaves out its first
// ocol dims (0: none; MLA's rope dims, whose latent dims alone go on to attn_v_b: the
// gather after the attention done here). With q8 (fused with the next product's
// rounding, fuse.go) the block also rounds its G*(VHD-ocol) outputs (whole 256-element
// blocks) to Q8_K into q8.
#include "common.cuh"
#include "mbar.cuh"
#include "mv1.cuh"

#define SH_THREADS 256

// KV1's rows (MLA's 1,152-byte latent rows) come by bulk copies, a thread a row, counted
// on an mbarrier (mbar.cuh): one block copies them ~3x as fast as by 16-byte cp.async
// (build/micro/kvcopy.cu on the H200: ~4-6 ns a row against ~14, from L2 or HBM alike).

template <int HD, int VHD, bool KV1, int T = SH_THREADS>
__device__ __forceinline__ void attention_short_body(float* dst, i64 dstride, const float* q, i64 qstride,
                                                     const uint16_t* k, i64 kstride, const uint16_t* v, i64 vstride,
                                                     const int* pos, int nhead, int nkv, float scale,
                                                     const int* table, int tcols, const int* seq, int bs, int cap,
                                                     int scap, int pre, int ocol, uint8_t* q8, i64 q8stride) {
    constexpr int GM = KV1 ? 1 : GQA_MAX;          // most heads a block
    constexpr int CK = HD / 8, CV = VHD / 8;        // 16-byte chunks of a K, V row
    constexpr int KC = (CK + 7) / 8;                // chunks a scoring thread takes (8 a row)
    constexpr int DG = CV, P = T / DG;              // P V: chunk lanes, position lanes
    constexpr int NG = DG < 32 ? T / 32 : P;        // partial sums: a warp's, or a position lane's
    static_assert(HD % 64 == 0, "the query's layout for pass 1 permutes whole groups of 8 chunks");
    extern __shared__ __align__(16) uint8_t sh[];
    __shared__ int rix[T];
    __shared__ float gm[GM], ginv[GM];
    __shared__ float wmax[T / 32];  // GM 1: each warp's largest score
    __shared__ __align__(8) uint64_t kbar[2];  // KV1: the tile's rows, the newest row (early)
    const int i = blockIdx.x, kvh = blockIdx.y, tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
    const int G = nhead / nkv, h0 = kvh * G;
    uint8_t* kt = sh;
    constexpr int RV = KV1 ? 2 * HD : 2 * VHD;  // bytes of a V tile row
    uint8_t* vt = KV1 ? sh : sh + (i64)cap * 2 * HD;
    float* qs = (float*)(sh + (i64)cap * 2 * HD + (KV1 ? 0 : (i64)cap * RV));
    float* sc = qs + G * HD;     // [G][scap]: scores, then probabilities
    float* red = sc + G * scap;  // [NG][G*VHD]: partial sums, then (group 0) the output
    // Positions, sequences and block tables are the host's (readable before the wait).
    const int n = pos[i] + 1;
    const int* tab = table ? table + (i64)seq[i] * tcols : 0;
    const bool one = n <= cap;  // the whole row in one tile: K and V loaded once
    const int tiles = (n + cap - 1) / cap;
    // early: the row's positions before the newest were written by earlier steps (pre:
    // the host says each row is its sequence's one new position), so one tile's rows of
    // them are copied before the wait, the newest after it.
    const bool early = pre && one;
    const uint32_t kb0 = (uint32_t)__cvta_generic_to_shared(&kbar[0]), kb1 = kb0 + 8;
    uint32_t ph0 = 0;  // kb0's phase (kb1 completes once)
    if (KV1 && tid == 0) {
        mbar_init(kb0, 1);
        mbar_init(kb1, 1);
        mbar_fence_init();
    }

    // rows looks up the cache rows of positions t0 .. t0+cnt-1 into rix; load_k and
    // load_v issue the cp.async copies of the tile's rows r0 .. end-1 (rix's), K (and V)
    // each as one group (KV1: V is the K tile).
    auto rows = [&](int t0, int cnt) {
        __syncthreads();  // the tile's earlier rows are no longer read
        if (tid < cnt) rix[tid] = (int)cache_row(tab, bs, t0 + tid);
        __syncthreads();
    };
    auto load_k = [&](int r0, int end) {
        for (int e = tid + r0 * CK; e < end * CK; e += T) {
            const int r = e / CK, c = e % CK;
            tc_cp16(kt + r * 2 * HD + 16 * c, k + (i64)rix[r] * kstride + (i64)kvh * HD + 8 * c, true);
        }
        tc_commit();
    };
    auto load_v = [&](int r0, int end) {
        for (int e = tid + r0 * CV; e < end * CV; e += T) {
            const int r = e / CV, c = e % CV;
            tc_cp16(vt + r * RV + 16 * c, v + (i64)rix[r] * vstride + (i64)kvh * VHD + 8 * c, true);
        }
        tc_commit();
    };
    // bulk (KV1) copies rows r0 .. end-1 of the tile, a thread a row, counted on bar
    // (whose arrival thread 0 makes, announcing the bytes, before any copy is issued).
    auto bulk = [&](int r0, int end, uint32_t bar) {
        if (tid == 0) mbar_expect(bar, (end - r0) * 2 * HD);
        __syncthreads();
        const int r = r0 + tid;
        if (r < end) bulk_g2s((uint32_t)__cvta_generic_to_shared(kt + r * 2 * HD), k + (i64)rix[r] * kstride + (i64)kvh * HD, 2 * HD, bar);
    };

    if (early) {  // K (and V) of positions 0 .. n-2 as one group
        if (tid < n) rix[tid] = (int)cache_row(tab, bs, tid);
        __syncthreads();
        if (KV1) bulk(0, n - 1, kb0);
        else {
            load_k(0, n - 1);
            load_v(0, n - 1);
        }
    }
    pdl_wait();
    // The newest position's rows (the kernel before wrote them), then the query, so that
    // the copies' round trip and the query's loads overlap.
    if (early) {
        if (KV1) {
            if (tid == 0) {
                mbar_expect(kb1, 2 * HD);
                bulk_g2s((uint32_t)__cvta_generic_to_shared(kt + (n - 1) * 2 * HD), k + (i64)rix[n - 1] * kstride + (i64)kvh * HD,
                        2 * HD, kb1);
            }
        } else {
            load_k(n - 1, n);
            load_v(n - 1, n);
        }
    }
    const float* qr = q + (i64)i * qstride + (i64)h0 * HD;
    // The query laid out for pass 1 (each head's element 8c+e at ((2j + e/4)*8 + o)*4 +
    // e%4, where c = 8j + o): a quarter warp's float4 loads read 128 contiguous bytes,
    // not 16 of every 32.
    for (int e = tid; e < G * HD; e += T) {
        const int g = e / HD, x = e - g * HD, c = x >> 3, o = c & 7, j = c >> 3, u = x & 7;
        qs[g * HD + ((2 * j + (u >> 2)) * 8 + o) * 4 + (u & 3)] = h2f(f2h(qr[e]));
    }

    float lmax = -INFINITY;  // GM 1: this lane's largest score
    // Pass 1: the scores, eight threads a position (each a chunk in eight: a quarter warp
    // reads one row's 128 contiguous bytes), four positions a warp at a time.
    for (int tl = 0; tl < tiles; tl++) {
        const int t0 = tl * cap, cnt = min(cap, n - t0);
        if (!early) {
            rows(t0, cnt);
            if (KV1) bulk(0, cnt, kb0);
            else load_k(0, cnt);
            if (!KV1 && one) load_v(0, cnt);
        }
        if (KV1) {
            mbar_wait(kb0, ph0);
            ph0 ^= 1;
            if (early) mbar_wait(kb1, 0);
        } else if (one && !early) asm volatile("cp.async.wait_group 1;" ::: "memory");
        else asm volatile("cp.async.wait_group 0;" ::: "memory");
        __syncthreads();
        const int oct = tid & 7;
        // Whole warps go round together (their shuffles take every lane).
        for (int r0 = 0; r0 < cnt; r0 += T / 8) {
            const int r = r0 + (tid >> 3);
            const bool on = r < cnt;
            float s[GM];
#pragma unroll
            for (int g = 0; g < GM; g++) s[g] = 0;
#pragma unroll
            for (int j = 0; j < KC; j++) {
                const int c = oct + 8 * j;
                if (on && c < CK) {
                    float kf[8];
                    unpack8(*(const uint4*)(kt + r * 2 * HD + 16 * c), kf);
#pragma unroll
                    for (int g = 0; g < GM; g++) {
                        if (g < G) {
                            const float4 qa = *(const float4*)(qs + g * HD + ((2 * j) * 8 + oct) * 4);
                            const float4 qb = *(const float4*)(qs + g * HD + ((2 * j + 1) * 8 + oct) * 4);
                            // Each product is exact (f16 times f16 fits a float), so a
                            // fused multiply-add rounds once where the sum would: the bits of
                            // s + (q0 k0 + q1 k1 + ... + q7 k7) added left to right.
                            float d = qa.x * kf[0];
                            d = __fmaf_rn(qa.y, kf[1], d);
                            d = __fmaf_rn(qa.z, kf[2], d);
                            d = __fmaf_rn(qa.w, kf[3], d);
                            d = __fmaf_rn(qb.x, kf[4], d);
                            d = __fmaf_rn(qb.y, kf[5], d);
                            d = __fmaf_rn(qb.z, kf[6], d);
                            d = __fmaf_rn(qb.w, kf[7], d);
                            s[g] += d;
                        }
                    }
                }
            }
#pragma unroll
            for (int g = 0; g < GM; g++) {
                s[g] += __shfl_xor_sync(0xffffffffu, s[g], 1);
                s[g] += __shfl_xor_sync(0xffffffffu, s[g], 2);
                s[g] += __shfl_xor_sync(0xffffffffu, s[g], 4);
            }
            if (on && oct == 0) {
#pragma unroll
                for (int g = 0; g < GM; g++)
                    if (g < G) sc[g * scap + t0 + r] = s[g] * scale;
                if constexpr (GM == 1) lmax = fmaxf(lmax, s[0] * scale);
            }
        }
    }
    if constexpr (GM == 1) {
        lmax = warp_max(lmax);
        if (lane == 0) wmax[w] = lmax;
    }
    __syncthreads();
    // Pass 2: each head's max and sum (a warp a head), then its probabilities. One head
    // (GM 1): the max from pass 1's warps, the exponentials by the whole block, their sum
    // by every warp alike (each lane's positions in order, then the butterfly: the single
    // warp's bits), and each probability formed where pass 3 reads it.
    float pinv = 0;
    if constexpr (GM == 1) {
        float mx = wmax[0];
#pragma unroll
        for (int j = 1; j < T / 32; j++) mx = fmaxf(mx, wmax[j]);
        for (int t = tid; t < n; t += T) sc[t] = expf(sc[t] - mx);
        __syncthreads();
        float e = 0;
        for (int t = lane; t < n; t += 32) e += sc[t];
        pinv = 1.0f / warp_sum(e);
    } else {
        for (int g = w; g < G; g += T / 32) {
            const float* row = sc + g * scap;
            float mx = -INFINITY;
            for (int t = lane; t < n; t += 32) mx = fmaxf(mx, row[t]);
            mx = warp_max(mx);
            float e = 0;
            for (int t = lane; t < n; t += 32) e += expf(row[t] - mx);
            e = warp_sum(e);
            if (lane == 0) { gm[g] = mx; ginv[g] = 1.0f / e; }
        }
        __syncthreads();
        for (int e = tid; e < G * scap; e += T) {
            const int g = e / scap, t = e % scap;
            if (t < n) sc[e] = h2f(f2h(expf(sc[e] - gm[g]) * ginv[g]));
        }
    }
    // Pass 3: p * V, DG chunk lanes by P position lanes taking positions round robin.
    const int dg = tid % DG, pp = tid / DG;
    float acc[GM][8];
#pragma unroll
    for (int g = 0; g < GM; g++)
#pragma unroll
        for (int d = 0; d < 8; d++) acc[g][d] = 0;
    for (int tl = 0; tl < tiles; tl++) {
        const int t0 = tl * cap, cnt = min(cap, n - t0);
        if (!one) {
            rows(t0, cnt);
            if (KV1) {
                bulk(0, cnt, kb0);
                mbar_wait(kb0, ph0);
                ph0 ^= 1;
            } else load_v(0, cnt);
        }
        if (!KV1) asm volatile("cp.async.wait_group 0;" ::: "memory");
        if (!(KV1 && one)) __syncthreads();  // KV1, one tile: nothing written since pass 2's barrier
        if (pp < P) {
#pragma unroll 4
            for (int r = pp; r < cnt; r += P) {
                float vf[8];
                unpack8(*(const uint4*)(vt + r * RV + 16 * dg), vf);
#pragma unroll
                for (int g = 0; g < GM; g++) {
                    if (g < G) {
                        const float p = GM == 1 ? h2f(f2h(sc[t0 + r] * pinv)) : sc[g * scap + t0 + r];
#pragma unroll
                        for (int d = 0; d < 8; d++) acc[g][d] = __fmaf_rn(p, vf[d], acc[g][d]);  // p * vf exact
                    }
                }
            }
        }
    }
    // The position lanes of a warp (DG < 32) add up by shuffles, then the groups' partial
    // sums in group order.
    if (DG < 32) {
#pragma unroll
        for (int o = DG; o < 32; o <<= 1)
#pragma unroll
            for (int g = 0; g < GM; g++)
#pragma unroll
                for (int d = 0; d < 8; d++) acc[g][d] += __shfl_xor_sync(0xffffffffu, acc[g][d], o);
    }
    const int grp = DG < 32 ? w : pp;
    if (DG < 32 ? lane < DG : pp < P) {
#pragma unroll
        for (int g = 0; g < GM; g++)
            if (g < G)
#pragma unroll
                for (int d = 0; d < 8; d++) red[(i64)grp * G * VHD + g * VHD + 8 * dg + d] = acc[g][d];
    }
    __syncthreads();
    const int OW = VHD - ocol;  // the dims a head's output row keeps
    float* out = dst + (i64)i * dstride + (i64)h0 * OW;
    for (int e = tid; e < G * VHD; e += T) {
        float s = 0;
        for (int j = 0; j < NG; j++) s += red[(i64)j * G * VHD + e];
        const int g = e / VHD, c = e - g * VHD;
        if (c >= ocol) out[g * OW + c - ocol] = s;
        red[e] = s;  // this thread alone reads and writes element e
    }
    if (!q8) return;
    // The group's outputs, G*OW values from element h0*OW of the row (whole 256-element
    // blocks: the host fuses only then), rounded to Q8_K as quant_q8_k would for the
    // MatMul that reads them, a warp a block (q8k_quant_warp: no barriers).
    __syncthreads();
    for (int b = w; b < G * OW / 256; b += T / 32) {
        float vv[8];
#pragma unroll
        for (int e = 0; e < 8; e++) {
            const int j = 256 * b + 8 * lane + e, g = j / OW;
            vv[e] = red[g * VHD + ocol + j - g * OW];
        }
        q8k_quant_warp(vv, q8 + (i64)i * q8stride, h0 * OW / 256 + b, nhead * OW);
    }
}

#define SHORT_ARGS                                                                                                 \
    float *dst, i64 dstride, const float *q, i64 qstride, const uint16_t *k, i64 kstride, const uint16_t *v,       \
        i64 vstride, const int *pos, int nhead, int nkv, int hd, int vhd, float scale, const int *table, int tcols, \
        const int *seq, int bs, int cap, int scap, int pre, int ocol, uint8_t *q8, i64 q8stride
#define SHORT_CALL dst, dstride, q, qstride, k, kstride, v, vstride, pos, nhead, nkv, scale, table, tcols, seq, bs, cap, scap, pre, ocol, q8, q8stride

extern "C" __global__ void __launch_bounds__(SH_THREADS) attention_short64(SHORT_ARGS) { pdl_defer();
    attention_short_body<64, 64, false>(SHORT_CALL);
}
extern "C" __global__ void __launch_bounds__(SH_THREADS) attention_short128(SHORT_ARGS) { pdl_defer();
    attention_short_body<128, 128, false>(SHORT_CALL);
}
#if EM_SM90  // the latent rows come by bulk copies: Hopper only
// attention_short576: MLA (one latent KV head, V the K rows themselves).
extern "C" __global__ void __launch_bounds__(SH_THREADS) attention_short576(SHORT_ARGS) { pdl_defer();
    attention_short_body<576, 576, true>(SHORT_CALL);
}
// attention_short576w: the same on 512 threads (16 warps an SM: twice the positions a
// scoring round, 7 position lanes in P V against 3).
extern "C" __global__ void __launch_bounds__(512) attention_short576w(SHORT_ARGS) { pdl_defer();
    attention_short_body<576, 576, true, 512>(SHORT_CALL);
}
#endif

// attention_vb576: attention_short576w of one token's H head rows (H even, grid H), each
// head's 512 latent outputs rounded to Q8_K into the block's shared memory (not q8),
// then attn_v_b's products in the same block: head i's matrix (VB_ROWS Q4_K rows of
// 512, vbs bytes apart, head i's vbest bytes after head 0's), loaded into registers
// before the wait (two rows a lane group: 24 registers held through the attention),
// times that Q8_K row into D's head row (drs floats apart): mmv_idw_q4_k's bits (a row's
// eight lanes as mv1_q4_k's lanes 0-7 of a 512-wide row, the zeros of its other lanes
// added as its butterfly adds them). With q8o, the cluster's two heads' 256 outputs are
// then rounded to Q8_K block i / 2 of the row of H * VB_ROWS values as quant_q8_k would
// (q8k_quant_warp): the odd head's block stores its outputs into the even one's shared
// memory and leaves; the even one rounds them after one cluster barrier. The output
// projection's input, two launches (mmv_idw_q4_k, quant_q8_k) and their grid-wide
// waits fewer than the chain.
#define VB_ROWS 128
#define VB_XQ 656  // a Q8_K row of 512: quants, d (padded to 16 bytes), bsums

// cluster_st stores v at p, an address in this block's shared memory, in the shared memory
// of the cluster's block of rank r (distributed shared memory).
__device__ __forceinline__ void cluster_st(void* p, int r, float v) {
    uint32_t a = (uint32_t)__cvta_generic_to_shared(p), ra;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(ra) : "r"(a), "r"(r));
    asm volatile("st.shared::cluster.f32 [%0], %1;" ::"r"(ra), "f"(v) : "memory");
}

#if EM_SM90  // a cluster of two blocks: Hopper only
extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(512, 1)
    attention_vb576(SHORT_ARGS, const uint8_t* Wvb, i64 vbs, i64 vbest, float* D, i64 drs, uint8_t* q8o) {
    pdl_defer();
    // Every block of the cluster has started once this barrier's wait returns (before the
    // first store into the peer's shared memory, long after).
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
    __shared__ __align__(16) uint8_t xq[VB_XQ];
    __shared__ float ov[2 * VB_ROWS];  // the even head's block: its outputs, then its peer's
    const int i = blockIdx.x, w = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int sub = lane & 7, ib = sub >> 2, c = sub & 3, gq = lane >> 3;
    uint4 h[2], qa[2], qb[2];  // rows 4w + gq and 64 + 4w + gq: lane sub's chunk of block ib
#pragma unroll
    for (int s = 0; s < 2; s++) {
        const uint8_t* p = Wvb + (i64)i * vbest + (i64)(64 * s + 4 * w + gq) * vbs + 144 * ib;
        h[s] = ldw16<wev(true)>(p), qa[s] = ldw16<wev(true)>(p + 16 + 32 * c), qb[s] = ldw16<wev(true)>(p + 32 + 32 * c);
    }
    attention_short_body<576, 576, true, 512>(dst, dstride, q, qstride, k, kstride, v, vstride, pos, nhead, nkv, scale, table,
                                              tcols, seq, bs, cap, scap, pre, ocol, xq, 0);
    __syncthreads();  // the head's Q8_K row, every warp's
    int xv[16];
    float yd;
    int4 xb;
    q4k_x(xq, 512, ib, c, false, xv, &yd, &xb);
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
#pragma unroll
    for (int s = 0; s < 2; s++) {
        int sb;
        const int sa = q4k_dot(qa[s], qb[s], xv, &sb);
        float v = 0.0f;
        v += q4k_part(h[s], c, sa, sb, yd, xb);
        v = v + 0.0f;  // mv1's warp_sum: lanes 16-31 and 8-15 of a 512-wide row hold zeros
        v = v + 0.0f;
        v += __shfl_xor_sync(0xffffffffu, v, 4);
        v += __shfl_xor_sync(0xffffffffu, v, 2);
        v += __shfl_xor_sync(0xffffffffu, v, 1);
        const int row = 64 * s + 4 * w + gq;
        if (sub == 0) {
            D[(i64)i * drs + row] = v;
            if (q8o && r == 0) ov[row] = v;
            if (q8o && r != 0) cluster_st(ov + VB_ROWS + row, 0, v);
        }
    }
    if (!q8o) return;
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
    if (r != 0) return;  // its outputs are in the even block's memory
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
    if (w == 0) {
        float vv[8];
#pragma unroll
        for (int e = 0; e < 8; e++) vv[e] = ov[8 * lane + e];
        q8k_quant_warp(vv, q8o, i / 2, (int)gridDim.x * VB_ROWS);
    }
}
#endif
