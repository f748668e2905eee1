// attention_split1.cu: split decode attention (flash decoding) in one launch, its blocks
// waiting for each other's statistics, the K and V rows through a shared-memory ring, the
// scores and p * V in SIMT (attention_smem's bits) or on the tensor cores; the two-launch
// kernels are in attention_split.cu.
//
// The query is rounded to f16 and the probabilities too, so every product of one with a
// cache value (f16) is exact in a float: each SIMT sum's step is a fused multiply-add
// (__fmaf_rn), which rounds once where the multiply and add (-fmad=false) did.
#include "attention_split.cuh"

#define SPLIT_VRING 16  // attention_split1's ring flag: the V rows through the ring too
#define SPLIT_TC 32     // attention_split1's ring flag: scores and p * V on the tensor cores
#define SPLIT_PAD 8     // floats past cmax in a row of scores: the tensor cores' B loads on other banks

// split_rcopy issues the copies of the K (or V) rows of positions s0 .. s0+SPLIT_CHUNK-1
// below end (zeros from end on) into ring stage st: SPLIT_CHUNK rows of hd halves (64 or
// 128), 16-byte chunk c of row r at split_swz(tc, r, c): c ^ 4(r & 1), so that the two
// rows a quarter-warp reads in split_kscores fall on other banks, or with tc c ^ (r & 7),
// so that the eight rows of an ldmatrix phase do. Position t's block is tab[t/bs - tb0]:
// the block table's row (tb0 0) or the chunk's part of it in shared memory (attention_split1),
// so that a copy's address waits on no global load.
__device__ __forceinline__ int split_swz(bool tc, int r, int c) { return c ^ (tc ? r & 7 : (r & 1) << 2); }
__device__ __forceinline__ void split_rcopy(uint8_t* st, const uint16_t* k, i64 kstride, int kvh, int hd,
                                           const int* tab, int tb0, int bs, int s0, int end, bool tc) {
    const int cs = hd == 128 ? 4 : 3, chunks = 1 << cs;  // hd 64 or 128: no divisions
    const int sh = (bs & (bs - 1)) == 0 ? __ffs(bs) - 1 : -1;
    // A thread's chunks / 4 copies (SPLIT_CHUNK * chunks of them a stage): every address
    // first, so that the table's loads are in flight together.
    const uint16_t* src[4];
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const int e = threadIdx.x + j * SM_THREADS, r = e >> cs, c = e & (chunks - 1), t = s0 + r;
        const bool ok = 4 * j < chunks && t < end;
        const i64 row = !ok || !tab ? t : sh >= 0 ? (i64)tab[(t >> sh) - tb0] * bs + (t & (bs - 1))
                                                  : (i64)tab[t / bs - tb0] * bs + t % bs;
        src[j] = ok ? k + row * kstride + kvh * hd + 8 * c : 0;
    }
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const int e = threadIdx.x + j * SM_THREADS, r = e >> cs, c = e & (chunks - 1);
        if (4 * j < chunks) tc_cp16(st + r * 2 * hd + 16 * split_swz(tc, r, c), src[j] ? src[j] : k, src[j] != 0);
    }
}

// split_kscores is split_scores over the K rows of ring stage st (split_rcopy's layout):
// the same products in the same order, so the same floats.
__device__ __forceinline__ void split_kscores(float* sc, const float* qs, const uint8_t* st, int hd, int G,
                                              float scale, int t0, int end, int ss) {
    const int tid = threadIdx.x, quad = tid & 3, chunks = hd / 8, r = tid >> 2;
    const int t = t0 + r;
    float s[GQA_MAX];
#pragma unroll
    for (int g = 0; g < GQA_MAX; g++) s[g] = 0;
    if (t < end) {
        const uint8_t* kr = st + r * 2 * hd;
        for (int c = quad; c < chunks; c += 4) {
            float kf[8];
            unpack8(*(const uint4*)(kr + 16 * (c ^ ((r & 1) << 2))), kf);
            split_dot8(s, qs, hd, G, c, kf);
        }
    }
    split_store(sc, s, G, scale, t, t0, end, ss);
}

// split_tcq builds the tensor-core B fragments of the group's query (qs, f16 values in
// floats; heads past G zero) for split_tcscores: k-step ks's two registers at qb[2ks].
__device__ __forceinline__ void split_tcq(uint32_t* qb, const float* qs, int hd, int G) {
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int ks = 0; ks < 8; ks++) {
        uint32_t b0 = 0, b1 = 0;
        if (16 * ks < hd && g < G) {
            const float* r = qs + g * hd + 16 * ks + 2 * t;
            b0 = h2pack(f2h(r[0]), f2h(r[1]));
            b1 = h2pack(f2h(r[8]), f2h(r[9]));
        }
        qb[2 * ks] = b0;
        qb[2 * ks + 1] = b1;
    }
}

// split_tcscores is split_kscores on the tensor cores (ring stage st in the tc layout):
// warp w < SPLIT_CHUNK/16 takes positions 16w .. 16w+15 as the rows of A (ldmatrix of
// the K rows) against the query's columns (qb), so a score's products add in the tensor
// cores' order, not attention_smem's.
__device__ __forceinline__ void split_tcscores(float* sc, const uint32_t* qb, const uint8_t* st, int hd, int G,
                                               float scale, int t0, int end, int ss) {
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    if (w >= SPLIT_CHUNK / 16) return;
    const int j = lane >> 3, r = 16 * w + (lane & 7) + 8 * (j & 1);
    const uint8_t* kr = st + r * 2 * hd;
    float d[4] = {0, 0, 0, 0};
#pragma unroll
    for (int ks = 0; ks < 8; ks++)
        if (16 * ks < hd) {
            uint32_t a[4];
            tc_ldsm(a, kr + 16 * split_swz(true, r, 2 * ks + (j >> 1)));
            tc_mma(d, a, qb[2 * ks], qb[2 * ks + 1]);
        }
    const int p = 16 * w + (lane >> 2);
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int g = 2 * (lane & 3) + h;
        if (g < G) {
            if (t0 + p < end) sc[g * ss + p] = d[h] * scale;
            if (t0 + p + 8 < end) sc[g * ss + p + 8] = d[2 + h] * scale;
        }
    }
}

// split_tcpv is attention_split1's p * V on the tensor cores: the chunk's V rows (t0 ..
// end) come through the ring rs (split_rcopy's tc layout; the first ring - 1 stages
// already issued); warp w sums dims 16w .. 16w+15 of every head (A: the V rows
// transposed by ldmatrix, B: the probabilities, sc rows of ss floats, zeros from the
// chunk's end to its last sub-chunk's) and writes them to part (head g's at g * ps).
// A lane's B columns past G read head G - 1's row: a column of B adds only to its own
// column of the sums, which no lane writes.
__device__ __forceinline__ void split_tcpv(float* part, i64 ps, const float* sc, int ss, uint8_t* rs, int ring,
                                           const uint16_t* v, i64 vstride, int kvh, int vhd, const int* tab, int tb0,
                                           int bs, int t0, int end, int G) {
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, j = lane >> 3;
    const int rstage = SPLIT_CHUNK * 2 * vhd, cnt = end - t0;
    const float* prow = sc + min(lane >> 2, G - 1) * ss + 2 * (lane & 3);
    float o[4] = {0, 0, 0, 0};
    for (int s0 = 0, u = 0; s0 < cnt; s0 += SPLIT_CHUNK, u++) {
        if (ring == 4)  // sub-chunk u landed; the barrier: u - 1's stage free for u + ring - 1
            asm volatile("cp.async.wait_group 2;" ::: "memory");
        else
            asm volatile("cp.async.wait_group 0;" ::: "memory");
        __syncthreads();
        const int sn = t0 + s0 + (ring - 1) * SPLIT_CHUNK;
        if (sn < end) split_rcopy(rs + ((u + ring - 1) % ring) * rstage, v, vstride, kvh, vhd, tab, tb0, bs, sn, end, true);
        tc_commit();
        const uint8_t* st = rs + (u % ring) * rstage;
        if (16 * w < vhd)
#pragma unroll
            for (int kp = 0; kp < SPLIT_CHUNK / 16; kp++) {
                const int r = 16 * kp + (lane & 7) + 8 * (j >> 1);
                const float2 p0 = *(const float2*)(prow + s0 + 16 * kp), p1 = *(const float2*)(prow + s0 + 16 * kp + 8);
                uint32_t a[4];
                tc_ldsm_t(a, st + r * 2 * vhd + 16 * split_swz(true, r, 2 * w + (j & 1)));
                tc_mma(o, a, h2pack(f2h(p0.x), f2h(p0.y)), h2pack(f2h(p1.x), f2h(p1.y)));
            }
    }
    if (16 * w < vhd)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int g = 2 * (lane & 3) + h, d = 16 * w + (lane >> 2);
            if (g < G) {
                part[g * ps + d] = o[h];
                part[g * ps + d + 8] = o[2 + h];
            }
        }
}

// attention_split1: attention_split.cu's two kernels in one launch, for grids whose blocks
// are all resident at once (the host checks: at most two blocks an SM, no more blocks than
// twice the SMs). A block scores its whole chunk into shared memory and publishes its
// heads' (m_c, l_c); the active blocks of a (row, KV head) then wait for each other (count
// reaching nact), so that every block finds the same M and L from the statistics in chunk
// order, rounds its probabilities against them and sums p * V over its chunk (the position
// lanes taking positions round robin over the whole chunk). The last block to finish
// (count reaching 2*nact) adds the partial sums in chunk order into dst and zeroes count.
// The scores are computed once, and the statistics never leave the SMs' L2. With q8 (fused
// with the next MatMul's rounding, fuse.go) the last block also rounds the group's output
// to Q8_K into q8 (rows of q8stride bytes). With ring 2 or 4 (hd 64 or 128) the K rows
// come through a ring of that many stages of SPLIT_CHUNK rows in shared memory
// (split_rcopy), ring - 1 of them in flight while a stage is scored: at long contexts a
// block's K loads, one round trip per sub-chunk without it, set its time (the 8B's decode
// after 16,384 positions read its cache at ~0.9 TB/s). ring + SPLIT_VRING (vhd == hd): the
// V rows too, after the scores, their first ring - 1 sub-chunks in flight while the block
// publishes its statistics and waits for the row's others (without it, four V rows a
// thread in flight). + SPLIT_TC (with SPLIT_VRING, head dims 64 or 128, G <= 8): the
// scores (split_tcscores) and p * V on the tensor cores, warp w summing dims 16w .. 16w+15
// of every head over the chunk (A: the V rows by ldmatrix.trans, B: the probabilities),
// its sums straight to the partial sums; there one barrier a sub-chunk (the next copies
// issued after it, into the stage the last sub-chunk left) and the chunk's statistics
// after its last scores, not a sub-chunk at a time. Dynamic shared memory: G*hd +
// G*(cmax+SPLIT_PAD) + SM_PART floats, cmax >= the chunk length, then ring *
// SPLIT_CHUNK * hd halves.
extern "C" __global__ void __launch_bounds__(SM_THREADS, 2)
attention_split1(float* dst, i64 dstride, const float* q, i64 qstride, const uint16_t* k, i64 kstride,
                 const uint16_t* v, i64 vstride, const int* pos, int nhead, int nkv, int hd, int vhd,
                 float scale, const int* table, int tcols, const int* seq, int bs, float* work, int* count,
                 int splits, int cmax, int ring, uint8_t* q8, i64 q8stride) { pdl_entry();
    extern __shared__ float smem[];
    __shared__ float gm[GQA_MAX], ginv[GQA_MAX];
    __shared__ int last;
    const int i = blockIdx.x, kvh = blockIdx.y % nkv, c = blockIdx.y / nkv, tid = threadIdx.x;
    const int G = nhead / nkv, h0 = kvh * G;
    const bool vring = (ring & SPLIT_VRING) != 0, tc = (ring & SPLIT_TC) != 0;
    ring &= SPLIT_VRING - 1;
    float* qs = smem;  // [G][hd]
    split_q(qs, q, qstride, i, h0, G, hd);  // first: its loads need no position
    const int n = pos[i] + 1, chunk = split_chunk(n, splits), t0 = c * chunk;
    if (t0 >= n || chunk > cmax) return;  // past the row's end (the host sizes cmax for every row)
    const int nact = (n + chunk - 1) / chunk, end = min(n, t0 + chunk), cnt = end - t0;
    const i64 base = (i64)i * nhead + h0;
    float2* stats = (float2*)work;
    float* part = work + 2 * (i64)gridDim.x * nhead * splits;
    int* ctr = count + (i64)i * nkv + kvh;
    const int* tab = table ? table + (i64)seq[i] * tcols : 0;
    const int ss = cmax + SPLIT_PAD;  // sc's row stride
    float* sc = qs + G * hd;          // [G][ss]: scores, then probabilities
    float* red = sc + G * ss;         // [P][vhd]
    // The V rows of the first positions this thread sums, loaded now: their latency
    // passes while the block scores and waits for the row's other blocks.
    const int DG = vhd / 8, P = SM_THREADS / DG;
    const int dg = tid % DG, pp = tid / DG;
#define VPRE 4
    uint4 vp[VPRE];
#pragma unroll
    for (int u = 0; u < VPRE; u++) {
        const int j = pp + P * u;
        if (!vring && pp < P && j < cnt) vp[u] = *(const uint4*)(v + cache_row(tab, bs, t0 + j) * vstride + kvh * vhd + 8 * dg);
    }
    // The ring's copies find their blocks in shared memory: the chunk's part of the block
    // table, in red (free until the partial sums; longer parts stay in global memory).
    const int* rtab = tab;
    int tb0 = 0;
    if (ring > 1 && tab && (end - 1) / bs - t0 / bs < SM_PART) {
        tb0 = t0 / bs;
        int* stab = (int*)red;
        for (int j = tid; j <= (end - 1) / bs - tb0; j += SM_THREADS) stab[j] = tab[tb0 + j];
        rtab = stab;
    }
    __syncthreads();
    const int lane = tid & 31, w = tid >> 5;
    uint32_t qb[16];
    if (tc) split_tcq(qb, qs, hd, G);
    uint8_t* rs = (uint8_t*)(red + SM_PART);  // [ring][SPLIT_CHUNK][hd] halves
    const int rstage = SPLIT_CHUNK * 2 * hd;
    if (ring > 1)
        for (int u = 0; u < ring - 1; u++) {
            if (t0 + u * SPLIT_CHUNK < end)
                split_rcopy(rs + u * rstage, k, kstride, kvh, hd, rtab, tb0, bs, t0 + u * SPLIT_CHUNK, end, tc);
            tc_commit();
        }
    float m = -INFINITY, l = 0;
    for (int s0 = t0, u = 0; s0 < end; s0 += SPLIT_CHUNK, u++) {
        if (tc) {  // one barrier a sub-chunk: sub-chunk u landed, u - 1's stage free for u + ring - 1
            if (ring == 4)
                asm volatile("cp.async.wait_group 2;" ::: "memory");
            else
                asm volatile("cp.async.wait_group 0;" ::: "memory");
            __syncthreads();
            const int sn = s0 + (ring - 1) * SPLIT_CHUNK;
            if (sn < end) split_rcopy(rs + ((u + ring - 1) % ring) * rstage, k, kstride, kvh, hd, rtab, tb0, bs, sn, end, tc);
            tc_commit();
            split_tcscores(sc + (s0 - t0), qb, rs + (u % ring) * rstage, hd, G, scale, s0, end, ss);
            continue;  // the statistics after the whole chunk
        }
        if (ring > 1) {  // sub-chunk u + ring - 1 into the stage sub-chunk u - 1 left
            const int sn = s0 + (ring - 1) * SPLIT_CHUNK;
            if (sn < end) split_rcopy(rs + ((u + ring - 1) % ring) * rstage, k, kstride, kvh, hd, rtab, tb0, bs, sn, end, tc);
            tc_commit();
            if (ring == 4)  // sub-chunk u's copies have landed (this thread's; the barrier: all)
                asm volatile("cp.async.wait_group 3;" ::: "memory");
            else
                asm volatile("cp.async.wait_group 1;" ::: "memory");
            __syncthreads();
            split_kscores(sc + (s0 - t0), qs, rs + (u % ring) * rstage, hd, G, scale, s0, end, ss);
        } else {
            split_scores(sc + (s0 - t0), qs, k, kstride, kvh, hd, G, scale, tab, bs, s0, end, ss);
        }
        __syncthreads();
        if (w < G) split_online(sc + w * ss + (s0 - t0), min(SPLIT_CHUNK, end - s0), lane, m, l);
    }
    if (tc) __syncthreads();  // the chunk's scores written, the stages free
    if (vring)  // the stages are free (the barrier after the last scores): V's first sub-chunks
        for (int u = 0; u < ring - 1; u++) {
            if (t0 + u * SPLIT_CHUNK < end)
                split_rcopy(rs + u * rstage, v, vstride, kvh, vhd, rtab, tb0, bs, t0 + u * SPLIT_CHUNK, end, tc);
            tc_commit();
        }
    if (tc) {  // the chunk's statistics at once: its maximum, then the sum against it
        if (w < G) {
            const float* row = sc + w * ss;
            float mx[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY}, e[4] = {0, 0, 0, 0};
            for (int j = lane; j < cnt; j += 128)
#pragma unroll
                for (int h = 0; h < 4; h++)
                    if (j + 32 * h < cnt) mx[h] = fmaxf(mx[h], row[j + 32 * h]);
            m = warp_max(fmaxf(fmaxf(mx[0], mx[1]), fmaxf(mx[2], mx[3])));
            for (int j = lane; j < cnt; j += 128)
#pragma unroll
                for (int h = 0; h < 4; h++)
                    if (j + 32 * h < cnt) e[h] += expf(row[j + 32 * h] - m);
            l = warp_sum((e[0] + e[1]) + (e[2] + e[3]));
        }
    }
    if (w < G && lane == 0) stats[(base + w) * splits + c] = make_float2(m, l);
    __threadfence();
    __syncthreads();
    if (tid == 0) {
        atomicAdd(ctr, 1);
        while (atomicAdd(ctr, 0) < nact) __nanosleep(32);
    }
    __syncthreads();
    __threadfence();
    if (w < G) split_meet<true>(stats + (base + w) * splits, nact, lane, &gm[w], &ginv[w]);
    __syncthreads();
    for (int g = 0; g < G; g++)
        for (int j = tid; j < (tc ? (cnt + SPLIT_CHUNK - 1) & -SPLIT_CHUNK : cnt); j += SM_THREADS)
            sc[g * ss + j] = j < cnt ? h2f(f2h(expf(sc[g * ss + j] - gm[g]) * ginv[g])) : 0;  // tc: zeros to the sub-chunk's end
    __syncthreads();
    if (tc) {
        split_tcpv(part + (base * splits + c) * vhd, (i64)splits * vhd, sc, ss, rs, ring, v, vstride, kvh, vhd, rtab, tb0,
                   bs, t0, end, G);
    } else {
        float acc[GQA_MAX][8];
#pragma unroll
        for (int g = 0; g < GQA_MAX; g++)
#pragma unroll
            for (int j = 0; j < 8; j++) acc[g][j] = 0;
        // p * V over the chunk's positions pp, pp + P, ... in order: the first VPRE rows
        // from the registers loaded above.
        auto add_pv = [&](int j, uint4 raw) {
            float vf[8];
            unpack8(raw, vf);
#pragma unroll
            for (int g = 0; g < GQA_MAX; g++) {
                if (g < G) {
                    const float p = sc[g * ss + j];
#pragma unroll
                    for (int d = 0; d < 8; d++) acc[g][d] = __fmaf_rn(p, vf[d], acc[g][d]);
                }
            }
        };
        if (vring) {  // sub-chunk by sub-chunk through the ring: each thread's positions in the same order
            for (int s0 = 0, u = 0; s0 < cnt; s0 += SPLIT_CHUNK, u++) {
                const int sn = t0 + s0 + (ring - 1) * SPLIT_CHUNK;
                if (sn < end) split_rcopy(rs + ((u + ring - 1) % ring) * rstage, v, vstride, kvh, vhd, rtab, tb0, bs, sn, end, false);
                tc_commit();
                if (ring == 4)
                    asm volatile("cp.async.wait_group 3;" ::: "memory");
                else
                    asm volatile("cp.async.wait_group 1;" ::: "memory");
                __syncthreads();
                const uint8_t* st = rs + (u % ring) * rstage;
                if (pp < P)
                    for (int r = pp; r < SPLIT_CHUNK && s0 + r < cnt; r += P)
                        add_pv(s0 + r, *(const uint4*)(st + r * 2 * vhd + 16 * split_swz(false, r, dg)));
                __syncthreads();  // the stage is free for sub-chunk u + ring
            }
        } else if (pp < P) {
#pragma unroll
            for (int u = 0; u < VPRE; u++)
                if (pp + P * u < cnt) add_pv(pp + P * u, vp[u]);
#pragma unroll 4
            for (int j = pp + P * VPRE; j < cnt; j += P)
                add_pv(j, *(const uint4*)(v + cache_row(tab, bs, t0 + j) * vstride + kvh * vhd + 8 * dg));
        }
        split_pv_meet(acc, red, part, G, P, pp, dg, vhd, base, splits, c);
    }
    __threadfence();
    __syncthreads();
    if (tid == 0) last = atomicAdd(ctr, 1) == 2 * nact - 1;
    __syncthreads();
    if (!last) return;
    __threadfence();
    if (tid == 0) *ctr = 0;  // zero again for the next launch
    for (int e = tid; e < G * vhd; e += SM_THREADS) {
        const int g = e / vhd, d = e % vhd;
        const float* pr = part + (base + g) * splits * vhd + d;
        const float s = part_sum(pr, vhd, nact);
        dst[(i64)i * dstride + (h0 + g) * vhd + d] = s;
        if (q8) red[e] = s;
    }
    if (!q8) return;
    // The group's output, G*vhd values starting at element h0*vhd of the row (whole
    // 256-element blocks: the host fuses only then), rounded to Q8_K as quant_q8_k would
    // for the MatMul that reads it (the attention output projection).
    __shared__ float qa[8], qv[256];
    __shared__ int qi[8];
    __syncthreads();  // red holds the whole output
    for (int e0 = 0; e0 < G * vhd; e0 += 256)
        q8k_quant_in(red[e0 + tid], q8 + (i64)i * q8stride, (h0 * vhd + e0) / 256, nhead * vhd, tid, qa, qi, qv, true);
}
