// attention_split.cu: decode attention with each row's positions split over several
// blocks (flash decoding), for few (query row, KV head) pairs over long contexts; the
// one-block-per-pair kernels are in attention.cu.
//
// The query is rounded to f16 and the probabilities too, so every product of one with a
// cache value (f16) is exact in a float: each sum's step is a fused multiply-add
// (__fmaf_rn), which rounds once where the multiply and add (-fmad=false) did, the same
// bits in one instruction fewer.
#include "common.cuh"

// Split attention (flash decoding), for few (query row, KV head) pairs over long contexts:
// the positions of each row are spread over `splits` blocks, so that a decode step keeps
// the SMs busy. The probabilities must be rounded to f16 against the row's global max M
// and sum L (as attention_smem and the reference do), so an online rescaling of partial
// V sums will not do; instead two kernels on a grid (rows, nkv*splits), blockIdx.y =
// c*nkv + kvh for chunk c:
//   attention_split_stats: chunk c's scores of every head of the group, and per head
//     the chunk's max m_c and l_c = sum of expf(s - m_c), into the scratch work.
//   attention_split_pv: M = max m_c and L = sum l_c * expf(m_c - M) over the row's chunks
//     in chunk order (the same in every block), the chunk's scores again (the same code,
//     so the same floats), p = f16(expf(s - M) * (1/L)), and the chunk's sum of p * V as
//     a partial sum; the last block of the (row, KV head) to finish adds the partial sums
//     in chunk order into dst.
// The chunk length is found on the device from the row's position n (pos[i] + 1):
// ceil(n / splits) rounded up to SPLIT_CHUNK, so a short row takes fewer blocks and the
// blocks past its end do nothing (but count themselves done). Scratch work: rows*nhead*
// splits float2 statistics, then rows*nhead*splits*vhd partial sums; count: rows*nkv ints,
// zero before the launch and left zero after it. Dynamic shared memory: G*hd + G*SPLIT_CHUNK
// floats (+ SM_PART for attention_split_pv). hd and vhd multiples of 8, G at most GQA_MAX.
#define SPLIT_CHUNK (SM_THREADS / 4)  // positions scored at a time: four threads each
#define SPLIT_VRING 16  // attention_split1's ring flag: the V rows through the ring too

__device__ __forceinline__ int split_chunk(int n, int splits) {
    const int c = (n + splits - 1) / splits;
    return (c + SPLIT_CHUNK - 1) / SPLIT_CHUNK * SPLIT_CHUNK;
}

// split_dot8 adds the products of chunk c (dims 8c .. 8c+7, kf) of a K row with each
// head g < G of the group's query qs to s[g], one fused multiply-add at a time in order;
// the query's eight floats in two 16-byte loads (hd a multiple of 8).
__device__ __forceinline__ void split_dot8(float* s, const float* qs, int hd, int G, int c, const float* kf) {
#pragma unroll
    for (int g = 0; g < GQA_MAX; g++)
        if (g < G) {
            const float4 a = *(const float4*)(qs + g * hd + 8 * c), b = *(const float4*)(qs + g * hd + 8 * c + 4);
            const float qv[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
            for (int j = 0; j < 8; j++) s[g] = __fmaf_rn(qv[j], kf[j], s[g]);
        }
}

// split_store adds the four lanes' sums s of position t (a quad of threads) and has the
// quad's first lane write the scaled scores of the heads g < G to sc[g*ss + t - t0] when
// t is before end.
__device__ __forceinline__ void split_store(float* sc, float* s, int G, float scale, int t, int t0, int end, int ss) {
#pragma unroll
    for (int g = 0; g < GQA_MAX; g++) {
        s[g] += __shfl_xor_sync(0xffffffffu, s[g], 1);
        s[g] += __shfl_xor_sync(0xffffffffu, s[g], 2);
    }
    if (t < end && (threadIdx.x & 3) == 0)
#pragma unroll
        for (int g = 0; g < GQA_MAX; g++)
            if (g < G) sc[g * ss + t - t0] = s[g] * scale;
}

// split_scores puts the scaled scores of positions t0 .. t0+SPLIT_CHUNK-1 below end of
// every head of the group in sc[g*ss + t - t0] (ss: SPLIT_CHUNK unless given), summed as
// attention_smem sums them.
__device__ __forceinline__ void split_scores(float* sc, const float* qs, const uint16_t* k, i64 kstride, int kvh,
                                             int hd, int G, float scale, const int* tab, int bs, int t0, int end,
                                             int ss = SPLIT_CHUNK) {
    const int tid = threadIdx.x, quad = tid & 3, chunks = hd / 8;
    const int t = t0 + (tid >> 2);
    float s[GQA_MAX];
#pragma unroll
    for (int g = 0; g < GQA_MAX; g++) s[g] = 0;
    if (t < end) {
        const uint16_t* kr = k + cache_row(tab, bs, t) * kstride + kvh * hd;
        for (int c = quad; c < chunks; c += 4) {
            float kf[8];
            unpack8(*(const uint4*)(kr + 8 * c), kf);
            split_dot8(s, qs, hd, G, c, kf);
        }
    }
    split_store(sc, s, G, scale, t, t0, end, ss);
}

// split_q rounds the group's query heads of row i to f16 into qs [G][hd].
__device__ __forceinline__ void split_q(float* qs, const float* q, i64 qstride, int i, int h0, int G, int hd) {
    for (int e = threadIdx.x; e < G * hd; e += SM_THREADS) {
        int g = e / hd, d = e % hd;
        qs[e] = h2f(f2h(q[(i64)i * qstride + (h0 + g) * hd + d]));
    }
}

extern "C" __global__ void __launch_bounds__(SM_THREADS)
attention_split_stats(float* dst, i64 dstride, const float* q, i64 qstride, const uint16_t* k, i64 kstride,
                      const uint16_t* v, i64 vstride, const int* pos, int nhead, int nkv, int hd, int vhd,
                      float scale, const int* table, int tcols, const int* seq, int bs, float* work, int* count,
                      int splits) { pdl_entry();
    extern __shared__ float smem[];
    const int i = blockIdx.x, kvh = blockIdx.y % nkv, c = blockIdx.y / nkv;
    const int G = nhead / nkv, h0 = kvh * G;
    const int n = pos[i] + 1, chunk = split_chunk(n, splits), t0 = c * chunk;
    if (t0 >= n) return;
    const int end = min(n, t0 + chunk);
    const int* tab = table ? table + (i64)seq[i] * tcols : 0;
    float* qs = smem;           // [G][hd]
    float* sc = smem + G * hd;  // [G][SPLIT_CHUNK]
    split_q(qs, q, qstride, i, h0, G, hd);
    __syncthreads();
    // Warp w keeps head w's running max and sum over the chunk's sub-chunks.
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    float m = -INFINITY, l = 0;
    for (int s0 = t0; s0 < end; s0 += SPLIT_CHUNK) {
        split_scores(sc, qs, k, kstride, kvh, hd, G, scale, tab, bs, s0, end);
        __syncthreads();
        if (w < G) {
            const int cnt = min(SPLIT_CHUNK, end - s0);
            const float* row = sc + w * SPLIT_CHUNK;
            float mx = -INFINITY;
            for (int j = lane; j < cnt; j += 32) mx = fmaxf(mx, row[j]);
            const float mn = fmaxf(m, warp_max(mx));
            float e = 0;
            for (int j = lane; j < cnt; j += 32) e += expf(row[j] - mn);
            l = l * expf(m - mn) + warp_sum(e);
            m = mn;
        }
        __syncthreads();
    }
    if (w < G && lane == 0) ((float2*)work)[((i64)i * nhead + h0 + w) * splits + c] = make_float2(m, l);
}

extern "C" __global__ void __launch_bounds__(SM_THREADS)
attention_split_pv(float* dst, i64 dstride, const float* q, i64 qstride, const uint16_t* k, i64 kstride,
                   const uint16_t* v, i64 vstride, const int* pos, int nhead, int nkv, int hd, int vhd,
                   float scale, const int* table, int tcols, const int* seq, int bs, float* work, int* count,
                   int splits) { pdl_entry();
    extern __shared__ float smem[];
    __shared__ float gm[GQA_MAX], ginv[GQA_MAX];
    __shared__ int last;
    const int i = blockIdx.x, kvh = blockIdx.y % nkv, c = blockIdx.y / nkv, tid = threadIdx.x;
    const int G = nhead / nkv, h0 = kvh * G;
    const int n = pos[i] + 1, chunk = split_chunk(n, splits), t0 = c * chunk;
    const int nact = (n + chunk - 1) / chunk;  // the chunks that hold positions
    const i64 base = (i64)i * nhead + h0;      // head g's chunk c: (base + g) * splits + c
    const float2* stats = (const float2*)work;
    float* part = work + 2 * (i64)gridDim.x * nhead * splits;  // [rows*nhead*splits][vhd]
    if (t0 < n) {
        const int end = min(n, t0 + chunk);
        const int* tab = table ? table + (i64)seq[i] * tcols : 0;
        float* qs = smem;                    // [G][hd]
        float* sc = qs + G * hd;             // [G][SPLIT_CHUNK]: scores, then probabilities
        float* red = sc + G * SPLIT_CHUNK;   // [P][vhd]: the position lanes' partial sums
        split_q(qs, q, qstride, i, h0, G, hd);
        const int lane = tid & 31, w = tid >> 5;
        if (w < G) {
            const float2* st = stats + (base + w) * splits;
            float M = -INFINITY;
            for (int j = lane; j < nact; j += 32) M = fmaxf(M, st[j].x);
            M = warp_max(M);
            float L = 0;
            for (int j = lane; j < nact; j += 32) L += st[j].y * expf(st[j].x - M);
            L = warp_sum(L);
            if (lane == 0) { gm[w] = M; ginv[w] = 1.0f / L; }
        }
        __syncthreads();
        const int DG = vhd / 8, P = SM_THREADS / DG;
        const int dg = tid % DG, pp = tid / DG;
        float acc[GQA_MAX][8];
#pragma unroll
        for (int g = 0; g < GQA_MAX; g++)
#pragma unroll
            for (int j = 0; j < 8; j++) acc[g][j] = 0;
        for (int s0 = t0; s0 < end; s0 += SPLIT_CHUNK) {
            const int cnt = min(SPLIT_CHUNK, end - s0);
            split_scores(sc, qs, k, kstride, kvh, hd, G, scale, tab, bs, s0, end);
            __syncthreads();
            for (int e = tid; e < G * SPLIT_CHUNK; e += SM_THREADS) {
                const int g = e / SPLIT_CHUNK;
                if (e % SPLIT_CHUNK < cnt) sc[e] = h2f(f2h(expf(sc[e] - gm[g]) * ginv[g]));
            }
            __syncthreads();
            if (pp < P) {
                for (int j = pp; j < cnt; j += P) {
                    float vf[8];
                    unpack8(*(const uint4*)(v + cache_row(tab, bs, s0 + j) * vstride + kvh * vhd + 8 * dg), vf);
#pragma unroll
                    for (int g = 0; g < GQA_MAX; g++) {
                        if (g < G) {
                            const float p = sc[g * SPLIT_CHUNK + j];
#pragma unroll
                            for (int d = 0; d < 8; d++) acc[g][d] = __fmaf_rn(p, vf[d], acc[g][d]);
                        }
                    }
                }
            }
            __syncthreads();  // the probabilities are read; the next sub-chunk's scores may come
        }
        // The position lanes' sums meet in shared memory, one head at a time.
#pragma unroll
        for (int g = 0; g < GQA_MAX; g++) {
            if (g < G) {
                if (pp < P)
#pragma unroll
                    for (int d = 0; d < 8; d++) red[pp * vhd + 8 * dg + d] = acc[g][d];
                __syncthreads();
                for (int d = tid; d < vhd; d += SM_THREADS) {
                    float s = 0;
                    for (int j = 0; j < P; j++) s += red[j * vhd + d];
                    part[((base + g) * splits + c) * vhd + d] = s;
                }
                __syncthreads();
            }
        }
    }
    // The last block of the (row, KV head) to finish adds the partial sums in chunk order.
    __threadfence();
    __syncthreads();
    if (tid == 0) last = atomicAdd(count + (i64)i * nkv + kvh, 1) == splits - 1;
    __syncthreads();
    if (!last) return;
    __threadfence();
    if (tid == 0) count[(i64)i * nkv + kvh] = 0;  // zero again for the next launch
    for (int e = tid; e < G * vhd; e += SM_THREADS) {
        const int g = e / vhd, d = e % vhd;
        const float* pr = part + (base + g) * splits * vhd + d;  // L2: other blocks wrote it
        const float s = part_sum(pr, vhd, nact);
        dst[(i64)i * dstride + (h0 + g) * vhd + d] = s;
    }
}

// split_kcopy issues the copies of the K rows of positions s0 .. s0+SPLIT_CHUNK-1 below
// end (zeros from end on) into ring stage st: SPLIT_CHUNK rows of hd halves (64 or 128),
// chunk c of row r at c ^ 4(r & 1), so that the two rows a quarter-warp reads in
// split_kscores fall on other banks.
__device__ __forceinline__ void split_kcopy(uint8_t* st, const uint16_t* k, i64 kstride, int kvh, int hd,
                                            const int* tab, int bs, int s0, int end) {
    const int cs = hd == 128 ? 4 : 3, chunks = 1 << cs;  // hd 64 or 128: no divisions
    const int sh = (bs & (bs - 1)) == 0 ? __ffs(bs) - 1 : -1;
    for (int e = threadIdx.x; e < SPLIT_CHUNK * chunks; e += SM_THREADS) {
        const int r = e >> cs, c = e & (chunks - 1), t = s0 + r;
        const bool ok = t < end;
        const i64 row = !ok || !tab ? t : sh >= 0 ? (i64)tab[t >> sh] * bs + (t & (bs - 1)) : cache_row(tab, bs, t);
        const uint16_t* src = ok ? k + row * kstride + kvh * hd + 8 * c : k;
        tc_cp16(st + r * 2 * hd + 16 * (c ^ ((r & 1) << 2)), src, ok);
    }
}

// split_kscores is split_scores over the K rows of ring stage st (split_kcopy's layout):
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

// attention_split1: the two kernels above in one launch, for grids whose blocks are all
// resident at once (the host checks: at most two blocks an SM, no more blocks than twice
// the SMs). A block scores its whole chunk into shared memory and publishes its heads'
// (m_c, l_c); the active blocks of a (row, KV head) then wait for each other (count
// reaching nact), so that every block finds the same M and L from the statistics in
// chunk order, rounds its probabilities against them and sums p * V over its chunk (the
// position lanes taking positions round robin over the whole chunk). The last block to
// finish (count reaching 2*nact) adds the partial sums in chunk order into dst and zeroes
// count. The scores are computed once, and the statistics never leave the SMs' L2.
// With q8 (fused with the next MatMul's rounding, fuse.go) the last block also rounds the
// group's output to Q8_K into q8 (rows of q8stride bytes). With ring 2 or 4 (hd 64 or 128)
// the K rows come through a ring of that many stages of SPLIT_CHUNK rows in shared memory
// (split_kcopy), ring - 1 of them in flight while a stage is scored: at long contexts a
// block's K loads, one round trip per sub-chunk without it, set its time (the 8B's
// decode after 16,384 positions read its cache at ~0.9 TB/s). ring + SPLIT_VRING (vhd ==
// hd): the V rows too, after the scores, their first ring - 1 sub-chunks in flight while
// the block publishes its statistics and waits for the row's others (without it, four V
// rows a thread in flight). Dynamic shared memory: G*hd + G*cmax + SM_PART floats, cmax
// >= the chunk length, then ring * SPLIT_CHUNK * hd halves.
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
    const bool vring = (ring & SPLIT_VRING) != 0;
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
    float* sc = qs + G * hd;     // [G][cmax]: scores, then probabilities
    float* red = sc + G * cmax;  // [P][vhd]
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
    __syncthreads();
    const int lane = tid & 31, w = tid >> 5;
    uint8_t* rs = (uint8_t*)(red + SM_PART);  // [ring][SPLIT_CHUNK][hd] halves
    const int rstage = SPLIT_CHUNK * 2 * hd;
    if (ring > 1)
        for (int u = 0; u < ring - 1; u++) {
            if (t0 + u * SPLIT_CHUNK < end)
                split_kcopy(rs + u * rstage, k, kstride, kvh, hd, tab, bs, t0 + u * SPLIT_CHUNK, end);
            tc_commit();
        }
    float m = -INFINITY, l = 0;
    for (int s0 = t0, u = 0; s0 < end; s0 += SPLIT_CHUNK, u++) {
        if (ring > 1) {  // sub-chunk u + ring - 1 into the stage sub-chunk u - 1 left
            const int sn = s0 + (ring - 1) * SPLIT_CHUNK;
            if (sn < end) split_kcopy(rs + ((u + ring - 1) % ring) * rstage, k, kstride, kvh, hd, tab, bs, sn, end);
            tc_commit();
            if (ring == 4)  // sub-chunk u's copies have landed (this thread's; the barrier: all)
                asm volatile("cp.async.wait_group 3;" ::: "memory");
            else
                asm volatile("cp.async.wait_group 1;" ::: "memory");
            __syncthreads();
            split_kscores(sc + (s0 - t0), qs, rs + (u % ring) * rstage, hd, G, scale, s0, end, cmax);
        } else {
            split_scores(sc + (s0 - t0), qs, k, kstride, kvh, hd, G, scale, tab, bs, s0, end, cmax);
        }
        __syncthreads();
        if (w < G) {
            const int nc = min(SPLIT_CHUNK, end - s0);
            const float* row = sc + w * cmax + (s0 - t0);
            float mx = -INFINITY;
            for (int j = lane; j < nc; j += 32) mx = fmaxf(mx, row[j]);
            const float mn = fmaxf(m, warp_max(mx));
            float e = 0;
            for (int j = lane; j < nc; j += 32) e += expf(row[j] - mn);
            l = l * expf(m - mn) + warp_sum(e);
            m = mn;
        }
    }
    if (vring)  // the stages are free (the barrier after the last scores): V's first sub-chunks
        for (int u = 0; u < ring - 1; u++) {
            if (t0 + u * SPLIT_CHUNK < end)
                split_kcopy(rs + u * rstage, v, vstride, kvh, vhd, tab, bs, t0 + u * SPLIT_CHUNK, end);
            tc_commit();
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
    if (w < G) {
        const float2* st = stats + (base + w) * splits;
        float M = -INFINITY;
        for (int j = lane; j < nact; j += 32) M = fmaxf(M, __ldcg(&st[j].x));
        M = warp_max(M);
        float L = 0;
        for (int j = lane; j < nact; j += 32) L += __ldcg(&st[j].y) * expf(__ldcg(&st[j].x) - M);
        L = warp_sum(L);
        if (lane == 0) { gm[w] = M; ginv[w] = 1.0f / L; }
    }
    __syncthreads();
    for (int g = 0; g < G; g++)
        for (int j = tid; j < cnt; j += SM_THREADS) sc[g * cmax + j] = h2f(f2h(expf(sc[g * cmax + j] - gm[g]) * ginv[g]));
    __syncthreads();
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
                const float p = sc[g * cmax + j];
#pragma unroll
                for (int d = 0; d < 8; d++) acc[g][d] = __fmaf_rn(p, vf[d], acc[g][d]);
            }
        }
    };
    if (vring) {  // sub-chunk by sub-chunk through the ring: each thread's positions in the same order
        for (int s0 = 0, u = 0; s0 < cnt; s0 += SPLIT_CHUNK, u++) {
            const int sn = t0 + s0 + (ring - 1) * SPLIT_CHUNK;
            if (sn < end) split_kcopy(rs + ((u + ring - 1) % ring) * rstage, v, vstride, kvh, vhd, tab, bs, sn, end);
            tc_commit();
            if (ring == 4)
                asm volatile("cp.async.wait_group 3;" ::: "memory");
            else
                asm volatile("cp.async.wait_group 1;" ::: "memory");
            __syncthreads();
            const uint8_t* st = rs + (u % ring) * rstage;
            if (pp < P)
                for (int r = pp; r < SPLIT_CHUNK && s0 + r < cnt; r += P)
                    add_pv(s0 + r, *(const uint4*)(st + r * 2 * vhd + 16 * (dg ^ ((r & 1) << 2))));
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
#pragma unroll
    for (int g = 0; g < GQA_MAX; g++) {
        if (g < G) {
            if (pp < P)
#pragma unroll
                for (int d = 0; d < 8; d++) red[pp * vhd + 8 * dg + d] = acc[g][d];
            __syncthreads();
            for (int d = tid; d < vhd; d += SM_THREADS) {
                float s = 0;
                for (int j = 0; j < P; j++) s += red[j * vhd + d];
                part[((base + g) * splits + c) * vhd + d] = s;
            }
            __syncthreads();
        }
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
