// attention_split.cu: decode attention with each row's positions split over several
// blocks (flash decoding), for few (query row, KV head) pairs over long contexts, as two
// launches; attention_split1.cu has the one-launch form, attention.cu the
// one-block-per-pair kernels.
//
// The query is rounded to f16 and the probabilities too, so every product of one with a
// cache value (f16) is exact in a float: each sum's step is a fused multiply-add
// (__fmaf_rn), which rounds once where the multiply and add (-fmad=false) did, the same
// bits in one instruction fewer.
#include "attention_split.cuh"

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
            split_online(sc + w * SPLIT_CHUNK, min(SPLIT_CHUNK, end - s0), lane, m, l);
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
        if (w < G) split_meet<false>(stats + (base + w) * splits, nact, lane, &gm[w], &ginv[w]);
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
        split_pv_meet(acc, red, part, G, P, pp, dg, vhd, base, splits, c);
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
