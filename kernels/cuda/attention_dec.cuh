// attention_dec.cuh: the block-level decode attention of attention_dec.cu (dec_attend
// and its helpers: the tiles' cache rows and copies, the scores, the split blocks'
// meeting), for its kernels attention_decD and attention_mla(_split); the design is
// described at the top of attention_dec.cu.
#pragma once
#include "common.cuh"

#define DEC_K 64
#define DEC_THREADS 256
#define DEC_PLD 144  // bytes of a P row: 128 padded so that ldmatrix's eight rows miss each other's banks

// dec_rows and dec_copy copy rows t0 .. t0+DEC_K-1 of a tile (D halves each, from src)
// into tile sm, zeros from nkeys on. Each warp takes whole rows (32/(D/8) at a time when
// a row has fewer than 32 chunks), so that a row's place in the cache (its block-table
// entry; sh is log2(bs) when bs is a power of two, else -1) is found once per row, not
// per chunk, and all of a warp's places at once: dec_rows gives lane j < NR the cache
// row of the warp's row j (row w*RPW + j%RPW + (j/RPW)*8*RPW of the tile; -1 past
// nkeys), one round trip for the tile, and dec_copy issues the copies from them. The
// two are apart so that a tile's table reads can be issued a step before its copies.
template <int D>
__device__ __forceinline__ int dec_rows(const int* tab, int bs, int sh, int t0, int nkeys) {
    constexpr int CPR = D / 8, LPR = CPR >= 32 ? 32 : CPR, RPW = 32 / LPR, NR = DEC_K / (DEC_THREADS / 32);
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    int mine = 0;
    if (lane < NR) {
        const int t = t0 + w * RPW + lane % RPW + (lane / RPW) * (DEC_THREADS / 32) * RPW;
        if (t < nkeys)
            mine = !tab ? t : sh >= 0 ? tab[t >> sh] * bs + (t & (bs - 1)) : tab[t / bs] * bs + t % bs;
        else
            mine = -1;
    }
    return mine;
}

// The cache rows are ints (a KV cache holds fewer than 2^31) and the stride (halves) an
// int, so a chunk's address is one 32x32-bit multiply-add; sm is a shared address.
template <int D>
__device__ __forceinline__ void dec_copy(uint32_t sm, const uint16_t* src, int stride, int mine) {
    constexpr int CPR = D / 8;                 // 16-byte chunks a row
    constexpr int LPR = CPR >= 32 ? 32 : CPR;  // lanes a row
    constexpr int RPW = 32 / LPR;              // rows a warp at once
    constexpr int NR = DEC_K / (DEC_THREADS / 32);  // rows a warp in all
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, cl = lane % LPR;
#pragma unroll
    for (int k = 0; k < NR / RPW; k++) {
        const int s = lane / LPR, r = w * RPW + s + k * (DEC_THREADS / 32) * RPW;
        const int row = __shfl_sync(0xffffffffu, mine, k * RPW + s);
        const bool ok = row >= 0;
        i64 off;  // halves: one 32x32-bit multiply (C's i64 product of the two is three)
        asm("mul.wide.s32 %0, %1, %2;" : "=l"(off) : "r"(ok ? row : 0), "r"(stride));
        const uint16_t* base = src + off;
        const uint32_t drow = sm + r * (2 * D);
#pragma unroll
        for (int c = cl; c < CPR; c += LPR)
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(drow + ((c ^ (r & 7)) << 4)),
                         "l"(base + 8 * c), "r"(ok ? 16 : 0)
                         : "memory");
    }
}

// The query tile is kept fragment-major: k16 block kb (dims 16kb..16kb+15) at 512 kb,
// its dims 16kb..16kb+7 of rows 0..15 at 16 r, dims 16kb+8.. at 256 + 16 r, so lane l of
// an ldmatrix of the A fragment gives 512 kb + 16 l (8 lanes read 128 consecutive bytes).
__device__ __forceinline__ int dec_qoff(int r, int c) { return 512 * (c >> 1) + 256 * (c & 1) + 16 * r; }

// dec_scores: warp w's scaled scores of positions t0+8w .. t0+8w+7 (accumulator e: row
// g (e < 2) or g+8 of the tile, position t0 + 8w + 2*(lane%4) + e%2), -inf from nkeys on.
// qa: the lane's query address (the tile's + 16 lane); kr: its key row's address in the
// tile (row 8w + lane%8), kx0 and kx1 the swizzled offsets of chunks lane/8 and 4 +
// lane/8 in it: chunk 2kk + lane/8 of the row (kk even) is at kx0 or kx1 (as kk/2 is
// even or odd) + 128 (kk/4), since the swizzle changes only a chunk's low three bits.
template <int D>
__device__ __forceinline__ void dec_scores(float* sc, uint32_t qa, uint32_t kr, uint32_t kx0, uint32_t kx1, int t0,
                                           int nkeys, float scale) {
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    float acc[4][4];
#pragma unroll
    for (int a = 0; a < 4; a++)
#pragma unroll
        for (int e = 0; e < 4; e++) acc[a][e] = 0;
#pragma unroll
    for (int kk = 0; kk < D / 16; kk += 2) {
        uint32_t a0[4], a1[4], b[4];
        tc_ldsm_at(a0, qa + 512 * kk);
        tc_ldsm_at(a1, qa + 512 * (kk + 1));
        tc_ldsm_at(b, kr + ((kk & 2) ? kx1 : kx0) + 128 * (kk >> 2));
        const int z = kk & 2;  // chains 0, 1 on even pairs of steps, 2, 3 on odd ones
        tc_mma(acc[z], a0, b[0], b[1]);
        tc_mma(acc[z + 1], a1, b[2], b[3]);
    }
    const int t = t0 + 8 * w + 2 * (lane & 3);
#pragma unroll
    for (int e = 0; e < 4; e++) {
        const float s = (acc[0][e] + acc[1][e]) + (acc[2][e] + acc[3][e]);
        sc[e] = t + (e & 1) < nkeys ? s * scale : -INFINITY;
    }
}

__host__ __device__ constexpr int dec_smem(int d, bool shared, int scap, int ns) {
    return 2 * 16 * d + (shared || scap ? 1 : 2) * ns * 2 * DEC_K * d + 16 * DEC_PLD + (scap ? 16 * (scap + 8) * 4 : 0);
}

// dec_wait waits until at most ns - 1 committed load groups are pending (ns 2 to 4): of
// the ns groups committed since the tile in use was, that tile's has arrived.
__device__ __forceinline__ void dec_wait(int ns) {
    if (ns >= 4)
        asm volatile("cp.async.wait_group 3;" ::: "memory");
    else if (ns == 3)
        asm volatile("cp.async.wait_group 2;" ::: "memory");
    else
        asm volatile("cp.async.wait_group 1;" ::: "memory");
}

// DecSplit: a block's part of a row's positions split over nact blocks (attention_mla_split):
// block c publishes its heads' (max, sum) over its part in stats[c][16] and its sums
// against them (probabilities rounded as a whole row's would be, against the part's
// statistics) in part[c][16][D]; the blocks meet once at ctr (zero between launches),
// then each adds a share of the rows' elements over the parts, weighted by their share
// of the row's sum, in part order.
struct DecSplit {
    float2* stats;
    float* part;
    int* ctr;
    int c, nact;
};

// dec_meet: the block's arrival at ctr, then a wait until `until` arrivals.
__device__ __forceinline__ void dec_meet(int* ctr, int until) {
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicAdd(ctr, 1);
        while (atomicAdd(ctr, 0) < until) __nanosleep(32);
    }
    __syncthreads();
    __threadfence();
}

// dec_attend computes the attention of the tile's nr rows (row r: query q0 + r*qstep,
// output dst0 + r*dstep) over positions tb .. tb + 64 nt - 1 (those below nkeys) of keys
// k and values v (v null: the key rows are the values), the rows of position t at tab's
// block t/bs; with scap > 0 (64 nt <= scap) the scores of pass 1 are kept for pass 2;
// ns (2 to 4) tiles a ring (dec_smem).
// With sp, the block is part sp->c of a split row (DecSplit): its sums, against its own
// statistics, meet the other parts' after pass 2 and are added, weighted, into dst.
// With q8 (no sp; the rows' outputs contiguous, dstep == D, nr*D whole 256-element
// blocks) the outputs are also rounded to Q8_K as quant_q8_k would, as blocks q8b ..
// of the Q8_K row q8 of q8k elements (the output projection's input: fuse.go); with
// q8t 1 (2) to Q8_0 (Q8_1) blocks q8b .. as quant_q8 would, a warp a block. With q8h
// (Q8_K only) the rounded values also go to the f16 row q8h as act_f16 would write them
// (the output projection's activation rows on cuBLASLt: fuse.go's fuseHalf).
template <int D, bool PRE = false>
__device__ __forceinline__ void dec_attend(uint8_t* smem, float (*stat)[16][2], float* dst0, i64 dstep,
                                           const float* q0, i64 qstep, int nr, const uint16_t* k, i64 kstride,
                                           const uint16_t* v, i64 vstride, const int* tab, int bs, int nkeys,
                                           float scale, int scap, int tb, int nt, int ns, const DecSplit* sp,
                                           uint8_t* q8 = nullptr, int q8b = 0, int q8k = 0, int q8t = 0,
                                           uint16_t* q8h = nullptr) {
    if (scap && nt * DEC_K > scap) __trap();  // the host bounds every row's positions by scap
    uint8_t* qsm = smem;                               // [16][D]
    uint8_t* ksm = qsm + 2 * 16 * D;                   // [ns][DEC_K][D]
    uint8_t* vsm = v && !scap ? ksm + ns * 2 * DEC_K * D : ksm;  // [ns][DEC_K][D], or the K tiles
    uint8_t* psm = vsm + ns * 2 * DEC_K * D;           // [16][DEC_PLD bytes]
    float* ssm = scap ? (float*)(psm + 16 * DEC_PLD) : nullptr;  // [nr][scap + 8] scores
    const int sst = scap + 8;
    const uint16_t* vsrc = v ? v : k;
    const int kst = (int)kstride, vst = (int)(v ? vstride : kstride);
    const int stage = 2 * DEC_K * D;
    const uint32_t ksa = (uint32_t)__cvta_generic_to_shared(ksm), vsa = (uint32_t)__cvta_generic_to_shared(vsm);
    const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5, g = lane >> 2, tig = lane & 3;
    const int ntile = nt;
    // One tile whose keys are the values and whose scores are kept: pass 2 reads its
    // rows from where pass 1 left them.
    const bool one = ssm && !v && ntile == 1;
    const int sh = (bs & (bs - 1)) == 0 ? __ffs(bs) - 1 : -1;
    // Load s of the sequence (pass 1's K tiles 0 .. ntile-1, then pass 2's: the K tile
    // unless its scores are kept, and the V tile unless the keys are the values and their
    // scores are not kept) into slot s % ns, as one commit group; past the sequence an
    // empty group, so that every step commits one. The first ns - 1 loads' table reads
    // are issued together; after them each load's are issued one step ahead (nxt), so no
    // step waits for a table read before its copies. Loads are copied in order, so the
    // slot is a counter (woff: its offset), not a division.
    const int nload = one ? ntile : 2 * ntile;
    auto rows = [&](int s) { return dec_rows<D>(tab, bs, sh, tb + (s < ntile ? s : s - ntile) * DEC_K, nkeys); };
    uint32_t woff = 0;
    auto copy = [&](int s, int mine) {
        if (s < ntile) {
            dec_copy<D>(ksa + woff, k, kst, mine);
        } else if (s < nload) {
            if (!ssm) dec_copy<D>(ksa + woff, k, kst, mine);
            if (v || ssm) dec_copy<D>(vsa + woff, vsrc, vst, mine);
        }
        tc_commit();
        woff = woff + stage == (uint32_t)(ns * stage) ? 0 : woff + stage;
    };
    // With PRE (attention_decD, opened by pdl_defer) the block-table reads of the first
    // loads come before the wait for the kernel before: a step's tables are the host's.
    int pre[3];
#pragma unroll
    for (int s = 0; s < 3; s++) pre[s] = s < ns - 1 && s < nload ? rows(s) : -1;
    int nxt = ns - 1 < nload ? rows(ns - 1) : -1;
    if (PRE) pdl_wait();
#pragma unroll
    for (int s = 0; s < 3; s++)
        if (s < ns - 1) copy(s, pre[s]);
    auto issue = [&](int s) {  // s: one more than the call before's (the first: ns - 1)
        const int cur = nxt;
        if (s + 1 < nload) nxt = rows(s + 1);
        copy(s, cur);
    };
    {  // The query tile in f16: every thread's loads issued before the first conversion.
        constexpr int QCH = 16 * (D / 8), QPT = (QCH + DEC_THREADS - 1) / DEC_THREADS;
        const bool al = (((uintptr_t)q0 | (uintptr_t)(qstep * 4)) & 15) == 0;
        float qv[QPT][8];
#pragma unroll
        for (int u = 0; u < QPT; u++) {
            const int e = tid + u * DEC_THREADS, r = e / (D / 8), c = e % (D / 8);
            const float* src = q0 + r * qstep + 8 * c;
            if (e < QCH && r < nr && al) {
                const float4 a = *(const float4*)src, b = *(const float4*)(src + 4);
                qv[u][0] = a.x, qv[u][1] = a.y, qv[u][2] = a.z, qv[u][3] = a.w;
                qv[u][4] = b.x, qv[u][5] = b.y, qv[u][6] = b.z, qv[u][7] = b.w;
            } else {
#pragma unroll
                for (int j = 0; j < 8; j++) qv[u][j] = e < QCH && r < nr ? src[j] : 0.0f;
            }
        }
#pragma unroll
        for (int u = 0; u < QPT; u++) {
            const int e = tid + u * DEC_THREADS, r = e / (D / 8), c = e % (D / 8);
            uint32_t hv[4];
#pragma unroll
            for (int j = 0; j < 4; j++) hv[j] = f2h(qv[u][2 * j]) | ((uint32_t)f2h(qv[u][2 * j + 1]) << 16);
            if (e < QCH) *(uint4*)(qsm + dec_qoff(r, c)) = make_uint4(hv[0], hv[1], hv[2], hv[3]);
        }
    }
    // The lane's ldmatrix addresses (dec_scores): the query's, and its key row's chunks.
    const uint32_t qa = (uint32_t)__cvta_generic_to_shared(qsm) + 16 * lane;
    const uint32_t kro = (8 * w + (lane & 7)) * (2 * D);
    const uint32_t kx0 = (((lane >> 3) ^ (lane & 7)) << 4), kx1 = (((4 + (lane >> 3)) ^ (lane & 7)) << 4);
    uint32_t roff = 0;  // the slot of the tile in use (a counter, as woff)
    auto next_slot = [&]() { roff = roff + stage == (uint32_t)(ns * stage) ? 0 : roff + stage; };

    // Pass 1: this warp's max m and sum s (against m) of rows g and g+8.
    float m0 = -INFINITY, m1 = -INFINITY, s0 = 0, s1 = 0;
    for (int it = 0; it < ntile; it++) {
        issue(it + ns - 1);
        dec_wait(ns);
        __syncthreads();
        if (tb + it * DEC_K + 8 * w < nkeys) {  // else all of this warp's positions are past the end
            float sc[4];
            dec_scores<D>(sc, qa, ksa + roff + kro, kx0, kx1, tb + it * DEC_K, nkeys, scale);
            if (ssm) {  // rows nr.. are the tile's zeros: none kept (ssm holds nr rows)
                const int t = it * DEC_K + 8 * w + 2 * tig;
                if (g < nr) *(float2*)(ssm + g * sst + t) = make_float2(sc[0], sc[1]);
                if (g + 8 < nr) *(float2*)(ssm + (g + 8) * sst + t) = make_float2(sc[2], sc[3]);
            }
            float x0 = fmaxf(sc[0], sc[1]), x1 = fmaxf(sc[2], sc[3]);
            x0 = fmaxf(x0, __shfl_xor_sync(0xffffffffu, x0, 1));
            x0 = fmaxf(x0, __shfl_xor_sync(0xffffffffu, x0, 2));
            x1 = fmaxf(x1, __shfl_xor_sync(0xffffffffu, x1, 1));
            x1 = fmaxf(x1, __shfl_xor_sync(0xffffffffu, x1, 2));
            const float n0 = fmaxf(m0, x0), n1 = fmaxf(m1, x1);
            // The running sums' rescaling, skipped by the warp where no lane's maximum
            // moved: expf(0) is 1 and s * 1.0f is s, so the bits are the same.
            float e0 = 1.0f, e1 = 1.0f;
            if (__any_sync(0xffffffffu, n0 != m0 || n1 != m1)) e0 = expf(m0 - n0), e1 = expf(m1 - n1);
            s0 = s0 * e0 + expf(sc[0] - n0) + expf(sc[1] - n0);
            s1 = s1 * e1 + expf(sc[2] - n1) + expf(sc[3] - n1);
            m0 = n0;
            m1 = n1;
        }
        next_slot();
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
    __syncthreads();
    float M0 = -INFINITY, M1 = -INFINITY, L0 = 0, L1 = 0;
#pragma unroll
    for (int j = 0; j < DEC_THREADS / 32; j++) M0 = fmaxf(M0, stat[j][g][0]), M1 = fmaxf(M1, stat[j][g + 8][0]);
#pragma unroll
    for (int j = 0; j < DEC_THREADS / 32; j++) {
        if (stat[j][g][0] > -INFINITY) L0 += stat[j][g][1] * expf(stat[j][g][0] - M0);
        if (stat[j][g + 8][0] > -INFINITY) L1 += stat[j][g + 8][1] * expf(stat[j][g + 8][0] - M1);
    }
    if (sp && w == 0 && tig == 0) {  // this part's statistics, for the others after the meeting
        sp->stats[sp->c * 16 + g] = make_float2(M0, L0);
        sp->stats[sp->c * 16 + g + 8] = make_float2(M1, L1);
    }
    const float inv0 = 1.0f / L0, inv1 = 1.0f / L1;

    // Pass 2: the scores again, their probabilities into the P tile, and P V.
    const int dg = w & 3, ph = w >> 2;
    // The lane's ldmatrix addresses: of the P tile (positions 32 ph..), and of the V
    // tile's rows 16 (2 ph) + lane%8 + 8 (lane/8 % 2) with, for head dims to 128, the
    // swizzled offsets of its chunks D/32 dg + 2 jj + lane/16 (vx).
    const uint32_t pla = (uint32_t)__cvta_generic_to_shared(psm) + (lane & 15) * DEC_PLD + 16 * (lane >> 4) + 64 * ph;
    const uint32_t vra = (32 * ph + (lane & 7) + (((lane >> 3) & 1) << 3)) * (2 * D);
    uint32_t vx[D <= 128 ? D / 64 : 1];
#pragma unroll
    for (int jj = 0; jj < (D <= 128 ? D / 64 : 1); jj++) vx[jj] = (((D / 32) * dg + 2 * jj + (lane >> 4)) ^ (lane & 7)) << 4;
    float o[D / 32][4];
#pragma unroll
    for (int j = 0; j < D / 32; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) o[j][e] = 0;
    for (int it = 0; it < ntile; it++) {
        issue(ntile + it + ns - 1);
        dec_wait(ns);
        __syncthreads();
        const uint32_t slot = one ? 0 : roff;
        float sc[4];
        if (ssm) {  // pass 1's scores; -inf from nkeys on (past the end pass 1 stored none) and in rows nr..
            const int t = it * DEC_K + 8 * w + 2 * tig, ta = tb + t;
            const float2 ninf = make_float2(-INFINITY, -INFINITY);
            const float2 a = ta < nkeys && g < nr ? *(const float2*)(ssm + g * sst + t) : ninf;
            const float2 c = ta < nkeys && g + 8 < nr ? *(const float2*)(ssm + (g + 8) * sst + t) : ninf;
            sc[0] = a.x, sc[1] = ta + 1 < nkeys ? a.y : -INFINITY;
            sc[2] = c.x, sc[3] = ta + 1 < nkeys ? c.y : -INFINITY;
        } else {
            dec_scores<D>(sc, qa, ksa + slot + kro, kx0, kx1, tb + it * DEC_K, nkeys, scale);
        }
        const int col = 16 * w + 4 * tig;  // byte offset of positions 8w + 2*tig, +1
        *(uint32_t*)(psm + g * DEC_PLD + col) = tc_prob(sc[0], M0, inv0) | (tc_prob(sc[1], M0, inv0) << 16);
        *(uint32_t*)(psm + (g + 8) * DEC_PLD + col) = tc_prob(sc[2], M1, inv1) | (tc_prob(sc[3], M1, inv1) << 16);
        __syncthreads();
        if (tb + it * DEC_K + 32 * ph < nkeys) {  // else the half's positions are all past the end
#pragma unroll
            for (int cc = 0; cc < 2; cc++) {  // positions 16c.. of the tile, c = 2 ph + cc
                uint32_t pa[4];
                tc_ldsm_at(pa, pla + 32 * cc);
#pragma unroll
                for (int jj = 0; jj < D / 64; jj++) {
                    uint32_t b[4];
                    const int ch = (D / 32) * dg + 2 * jj + (lane >> 4);
                    tc_ldsm_t_at(b, vsa + slot + vra + 32 * D * cc + (D <= 128 ? vx[jj] : ((ch ^ (lane & 7)) << 4)));
                    tc_mma(o[2 * jj], pa, b[0], b[1]);
                    tc_mma(o[2 * jj + 1], pa, b[2], b[3]);
                }
            }
        }
        next_slot();
        __syncthreads();
    }
    asm volatile("cp.async.wait_all;" ::: "memory");
    __syncthreads();
    // The second half's sums meet the first's in the K tiles' space, then rows g and g+8,
    // dims D/4*dg + 8j + 2*(lane%4) and the next, are written.
    float* red = (float*)ksm;  // [16][D]
    const int d0 = (D / 4) * dg + 2 * tig;
    if (ph == 1)
#pragma unroll
        for (int j = 0; j < D / 32; j++) {
            *(float2*)(red + g * D + d0 + 8 * j) = make_float2(o[j][0], o[j][1]);
            *(float2*)(red + (g + 8) * D + d0 + 8 * j) = make_float2(o[j][2], o[j][3]);
        }
    __syncthreads();
    // This block's sums: into dst, or with sp into its part.
    float* out = sp ? sp->part + (i64)sp->c * 16 * D : dst0;
    const i64 ostep = sp ? D : dstep;
    if (ph == 0)
#pragma unroll
        for (int j = 0; j < D / 32; j++) {
            const float2 ra = *(const float2*)(red + g * D + d0 + 8 * j);
            const float2 rb = *(const float2*)(red + (g + 8) * D + d0 + 8 * j);
            const float2 sa = make_float2(o[j][0] + ra.x, o[j][1] + ra.y);
            const float2 sb = make_float2(o[j][2] + rb.x, o[j][3] + rb.y);
            if (g < nr) *(float2*)(out + g * ostep + d0 + 8 * j) = sa;
            if (g + 8 < nr) *(float2*)(out + (g + 8) * ostep + d0 + 8 * j) = sb;
            if (q8) {  // the sums where this thread read its halves: red then holds the output
                *(float2*)(red + g * D + d0 + 8 * j) = sa;
                *(float2*)(red + (g + 8) * D + d0 + 8 * j) = sb;
            }
        }
    if (q8 && !sp) {  // the rounding's scratch past red, in the K tiles' space (no static memory)
        float* qv = red + 16 * D;
        float* qa = qv + 256;
        int* qi = (int*)(qa + 8);
        __syncthreads();
        if (q8t) {
            for (int e0 = 0; e0 < nr * D; e0 += 256) q8_quant_lane(red[e0 + tid], q8, q8b + (e0 + tid) / 32, q8k, q8t == 2);
            return;
        }
        for (int e0 = 0; e0 < nr * D; e0 += 256)
            q8k_quant_in(red[e0 + tid], q8, q8b + e0 / 256, q8k, tid, qa, qi, qv, true, q8h);
        return;
    }
    if (!sp) return;
    // Every part's sums and statistics are out: each part's weight in each row (its share
    // of the row's sum, against the row's max) into shared memory (warp w: rows w, w+8),
    // then a share of the rows' elements summed over the parts in part order.
    dec_meet(sp->ctr, sp->nact);
    const int nact = sp->nact;
    float* wgt = (float*)ksm;  // [16][nact]
    for (int rr = w; rr < nr; rr += DEC_THREADS / 32) {
        float m = -INFINITY, l = 0;
        for (int j = lane; j < nact; j += 32) m = fmaxf(m, __ldcg(&sp->stats[j * 16 + rr].x));
        m = warp_max(m);
        for (int j = lane; j < nact; j += 32) {
            const float2 a = __ldcg(&sp->stats[j * 16 + rr]);
            l += a.y * expf(a.x - m);
        }
        l = warp_sum(l);
        for (int j = lane; j < nact; j += 32) {
            const float2 a = __ldcg(&sp->stats[j * 16 + rr]);
            wgt[rr * nact + j] = a.y * expf(a.x - m) / l;
        }
    }
    __syncthreads();
    for (int e = sp->c * DEC_THREADS + tid; e < nr * D; e += nact * DEC_THREADS) {
        const float* pr = sp->part + e;
        const float* wr = wgt + (e / D) * nact;
        float sum = 0;
        int j = 0;
        for (; j + 8 <= nact; j += 8) {
            float x[8];
#pragma unroll
            for (int u = 0; u < 8; u++) x[u] = __ldcg(pr + (i64)(j + u) * 16 * D);
#pragma unroll
            for (int u = 0; u < 8; u++) sum += x[u] * wr[j + u];
        }
        for (; j < nact; j++) sum += __ldcg(pr + (i64)j * 16 * D) * wr[j];
        dst0[(e / D) * dstep + e % D] = sum;
    }
    __syncthreads();
    if (tid == 0 && atomicAdd(sp->ctr, 1) == 2 * nact - 1) *sp->ctr = 0;  // zero for the next launch
}
