// attention.cu: causal attention over the F16 KV cache, through the paged block table.
// One block of 128 threads per (query row, head): pass 1 finds the max score and the
// softmax sum (online, per warp, in float with expf), pass 2 recomputes each score,
// rounds its probability to f16 as llama.cpp does, and accumulates V. Warps take
// positions round robin; lanes split the head dims. Head dims up to MAX_HEAD: 576 is
// MLA's latent row (DeepSeek-V2: 64 rope + 512 latent dims, one KV head, V is K).
#include "common.cuh"

#define ATT_WARPS 4
#define MAX_HEAD 576

__device__ __forceinline__ i64 cache_row(const int* tab, int bs, int t) {
    return tab ? (i64)tab[t / bs] * bs + t % bs : (i64)t;
}

// q [n, nhead*hd] F32 (row stride qstride floats); k, v F16 rows of kstride, vstride
// halves; dst [n, nhead*vhd] F32; table I32 [seqs, tcols] or null; seq I32 [n].
extern "C" __global__ void __launch_bounds__(128)
attention_f16(float* dst, i64 dstride, const float* q, i64 qstride, const uint16_t* k, i64 kstride,
              const uint16_t* v, i64 vstride, const int* pos, int nhead, int nkv, int hd, int vhd,
              float scale, const int* table, int tcols, const int* seq, int bs) { pdl_entry();
    __shared__ float qs[MAX_HEAD];
    __shared__ float wm[ATT_WARPS];
    __shared__ float wl[ATT_WARPS];
    __shared__ float out[ATT_WARPS][MAX_HEAD];
    const int i = blockIdx.x, h = blockIdx.y;
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const int kvh = h / (nhead / nkv);
    const int n = pos[i] + 1;
    const int* tab = table ? table + (i64)seq[i] * tcols : 0;
    for (int d = threadIdx.x; d < hd; d += blockDim.x) qs[d] = h2f(f2h(q[(i64)i * qstride + h * hd + d]));
    __syncthreads();

    float m = -INFINITY;
    float l = 0;
    for (int t = w; t < n; t += ATT_WARPS) {
        const uint16_t* kr = k + cache_row(tab, bs, t) * kstride + kvh * hd;
        float s = 0;
        for (int d = lane; d < hd; d += 32) s += qs[d] * h2f(kr[d]);
        s = warp_sum(s) * scale;
        if (s > m) {
            l = l * expf(m - s) + 1.0f;
            m = s;
        } else {
            l += expf(s - m);
        }
    }
    if (lane == 0) { wm[w] = m; wl[w] = l; }
    __syncthreads();
    float M = wm[0];
    for (int j = 1; j < ATT_WARPS; j++) M = fmaxf(M, wm[j]);
    float L = 0;
    for (int j = 0; j < ATT_WARPS; j++)
        if (wm[j] != -INFINITY) L += wl[j] * expf(wm[j] - M);
    const float inv = 1.0f / L;

    float acc[MAX_HEAD / 32];
#pragma unroll
    for (int j = 0; j < MAX_HEAD / 32; j++) acc[j] = 0;
    for (int t = w; t < n; t += ATT_WARPS) {
        i64 row = cache_row(tab, bs, t);
        const uint16_t* kr = k + row * kstride + kvh * hd;
        float s = 0;
        for (int d = lane; d < hd; d += 32) s += qs[d] * h2f(kr[d]);
        s = warp_sum(s) * scale;
        float e = expf(s - M);
        float p = h2f(f2h(e * inv));
        const uint16_t* vr = v + row * vstride + kvh * vhd;
#pragma unroll
        for (int j = 0; j < MAX_HEAD / 32; j++) {
            int d = lane + 32 * j;
            if (d < vhd) acc[j] += p * h2f(vr[d]);
        }
    }
#pragma unroll
    for (int j = 0; j < MAX_HEAD / 32; j++) {
        int d = lane + 32 * j;
        if (d < vhd) out[w][d] = acc[j];
    }
    __syncthreads();
    for (int d = threadIdx.x; d < vhd; d += blockDim.x) {
        float s = 0;
        for (int j = 0; j < ATT_WARPS; j++) s += out[j][d];
        dst[(i64)i * dstride + h * vhd + d] = s;
    }
}

// attention_gqa: as attention_f16, but one block per (query row, KV head) computes every
// query head of the group (at most 8) from one read of each K and V row, the group's
// dot products interleaved. Head dims at most 128.
#define GQA_MAX 8
#define GQA_HEAD 128
extern "C" __global__ void __launch_bounds__(128)
attention_gqa(float* dst, i64 dstride, const float* q, i64 qstride, const uint16_t* k, i64 kstride,
              const uint16_t* v, i64 vstride, const int* pos, int nhead, int nkv, int hd, int vhd,
              float scale, const int* table, int tcols, const int* seq, int bs) { pdl_entry();
    __shared__ float qs[GQA_MAX][GQA_HEAD];
    __shared__ float wm[ATT_WARPS][GQA_MAX];
    __shared__ float wl[ATT_WARPS][GQA_MAX];
    __shared__ float out[ATT_WARPS][GQA_MAX][GQA_HEAD];
    const int i = blockIdx.x, kvh = blockIdx.y;
    const int G = nhead / nkv, h0 = kvh * G;
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const int n = pos[i] + 1;
    const int* tab = table ? table + (i64)seq[i] * tcols : 0;
    for (int e = threadIdx.x; e < G * hd; e += blockDim.x) {
        int g = e / hd, d = e % hd;
        qs[g][d] = h2f(f2h(q[(i64)i * qstride + (h0 + g) * hd + d]));
    }
    __syncthreads();

    float m[GQA_MAX], l[GQA_MAX];
#pragma unroll
    for (int g = 0; g < GQA_MAX; g++) { m[g] = -INFINITY; l[g] = 0; }
    for (int t = w; t < n; t += ATT_WARPS) {
        const uint16_t* kr = k + cache_row(tab, bs, t) * kstride + kvh * hd;
        float kv[GQA_HEAD / 32];
#pragma unroll
        for (int j = 0; j < GQA_HEAD / 32; j++) kv[j] = lane + 32 * j < hd ? h2f(kr[lane + 32 * j]) : 0.0f;
        float s[GQA_MAX];
#pragma unroll
        for (int g = 0; g < GQA_MAX; g++) {
            s[g] = 0;
            if (g < G) {
#pragma unroll
                for (int j = 0; j < GQA_HEAD / 32; j++)
                    if (lane + 32 * j < hd) s[g] += qs[g][lane + 32 * j] * kv[j];
            }
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
#pragma unroll
            for (int g = 0; g < GQA_MAX; g++) s[g] += __shfl_xor_sync(0xffffffffu, s[g], o);
#pragma unroll
        for (int g = 0; g < GQA_MAX; g++) {
            if (g < G) {
                float sc = s[g] * scale;
                if (sc > m[g]) {
                    l[g] = l[g] * expf(m[g] - sc) + 1.0f;
                    m[g] = sc;
                } else {
                    l[g] += expf(sc - m[g]);
                }
            }
        }
    }
    if (lane == 0)
        for (int g = 0; g < G; g++) { wm[w][g] = m[g]; wl[w][g] = l[g]; }
    __syncthreads();
    float M[GQA_MAX], inv[GQA_MAX];
#pragma unroll
    for (int g = 0; g < GQA_MAX; g++) {
        M[g] = -INFINITY;
        inv[g] = 0;
        if (g < G) {
            for (int j = 0; j < ATT_WARPS; j++) M[g] = fmaxf(M[g], wm[j][g]);
            float L = 0;
            for (int j = 0; j < ATT_WARPS; j++)
                if (wm[j][g] != -INFINITY) L += wl[j][g] * expf(wm[j][g] - M[g]);
            inv[g] = 1.0f / L;
        }
    }

    float acc[GQA_MAX][GQA_HEAD / 32];
#pragma unroll
    for (int g = 0; g < GQA_MAX; g++)
#pragma unroll
        for (int j = 0; j < GQA_HEAD / 32; j++) acc[g][j] = 0;
    for (int t = w; t < n; t += ATT_WARPS) {
        i64 row = cache_row(tab, bs, t);
        const uint16_t* kr = k + row * kstride + kvh * hd;
        const uint16_t* vr = v + row * vstride + kvh * vhd;
        float kv[GQA_HEAD / 32], vv[GQA_HEAD / 32];
#pragma unroll
        for (int j = 0; j < GQA_HEAD / 32; j++) {
            kv[j] = lane + 32 * j < hd ? h2f(kr[lane + 32 * j]) : 0.0f;
            vv[j] = lane + 32 * j < vhd ? h2f(vr[lane + 32 * j]) : 0.0f;
        }
        float s[GQA_MAX];
#pragma unroll
        for (int g = 0; g < GQA_MAX; g++) {
            s[g] = 0;
            if (g < G) {
#pragma unroll
                for (int j = 0; j < GQA_HEAD / 32; j++)
                    if (lane + 32 * j < hd) s[g] += qs[g][lane + 32 * j] * kv[j];
            }
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
#pragma unroll
            for (int g = 0; g < GQA_MAX; g++) s[g] += __shfl_xor_sync(0xffffffffu, s[g], o);
#pragma unroll
        for (int g = 0; g < GQA_MAX; g++) {
            if (g < G) {
                float e = expf(s[g] * scale - M[g]);
                float p = h2f(f2h(e * inv[g]));
#pragma unroll
                for (int j = 0; j < GQA_HEAD / 32; j++) acc[g][j] += p * vv[j];
            }
        }
    }
#pragma unroll
    for (int g = 0; g < GQA_MAX; g++)
#pragma unroll
        for (int j = 0; j < GQA_HEAD / 32; j++)
            if (g < G && lane + 32 * j < vhd) out[w][g][lane + 32 * j] = acc[g][j];
    __syncthreads();
    for (int e = threadIdx.x; e < G * vhd; e += blockDim.x) {
        int g = e / vhd, d = e % vhd;
        float s = 0;
        for (int j = 0; j < ATT_WARPS; j++) s += out[j][g][d];
        dst[(i64)i * dstride + (h0 + g) * vhd + d] = s;
    }
}

// attention_smem: one block of 256 threads per (query row, KV head) with every query head
// of the group. Scores: four threads per position (each a quarter of the head dims, 16
// bytes at a time, for all the group's heads) into shared memory; then the softmax exact
// as the reference (max, exp, sum, probabilities rounded to f16); then V: each thread
// takes 8 dims of a subset of the positions, and the partial sums meet in shared memory.
// Dynamic shared memory: G*hd + G*max(nmax, 2048) floats, nmax bounding the positions
// (the cache size). hd and vhd must be multiples of 8.
#define SM_THREADS 256
#define SM_PART 2048  // partial-sum floats per head (P * vhd <= 256 / (vhd/8) * vhd)
__device__ __forceinline__ float block_max(float v, float* red) {
    v = warp_max(v);
    __syncthreads();
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
    __syncthreads();
    float r = red[0];
    for (int j = 1; j < SM_THREADS / 32; j++) r = fmaxf(r, red[j]);
    return r;
}
__device__ __forceinline__ float block_sum(float v, float* red) {
    v = warp_sum(v);
    __syncthreads();
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
    __syncthreads();
    float r = 0;
    for (int j = 0; j < SM_THREADS / 32; j++) r += red[j];
    return r;
}

__device__ __forceinline__ void unpack8(uint4 raw, float* f) {
    const uint32_t w4[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int j = 0; j < 4; j++) {
        f[2 * j] = h2f(w4[j] & 0xffff);
        f[2 * j + 1] = h2f(w4[j] >> 16);
    }
}

extern "C" __global__ void __launch_bounds__(SM_THREADS)
attention_smem(float* dst, i64 dstride, const float* q, i64 qstride, const uint16_t* k, i64 kstride,
               const uint16_t* v, i64 vstride, const int* pos, int nhead, int nkv, int hd, int vhd,
               float scale, const int* table, int tcols, const int* seq, int bs, int nmax) { pdl_entry();
    extern __shared__ float smem[];
    __shared__ float red[SM_THREADS / 32];
    const int i = blockIdx.x, kvh = blockIdx.y, tid = threadIdx.x;
    const int G = nhead / nkv, h0 = kvh * G;
    const int stride = max(nmax, SM_PART);
    float* qs = smem;            // [G][hd]
    float* sc = smem + G * hd;   // [G][stride]: scores, then probabilities, then partial sums
    const int n = pos[i] + 1;
    const int* tab = table ? table + (i64)seq[i] * tcols : 0;
    for (int e = tid; e < G * hd; e += SM_THREADS) {
        int g = e / hd, d = e % hd;
        qs[e] = h2f(f2h(q[(i64)i * qstride + (h0 + g) * hd + d]));
    }
    __syncthreads();
    const int quad = tid & 3, chunks = hd / 8;
    for (int t0 = 0; t0 < n; t0 += SM_THREADS / 4) {
        const int t = t0 + (tid >> 2);
        float s[GQA_MAX];
#pragma unroll
        for (int g = 0; g < GQA_MAX; g++) s[g] = 0;
        if (t < n) {
            const uint16_t* kr = k + cache_row(tab, bs, t) * kstride + kvh * hd;
            for (int c = quad; c < chunks; c += 4) {
                float kf[8];
                unpack8(*(const uint4*)(kr + 8 * c), kf);
#pragma unroll
                for (int g = 0; g < GQA_MAX; g++)
                    if (g < G)
#pragma unroll
                        for (int j = 0; j < 8; j++) s[g] += qs[g * hd + 8 * c + j] * kf[j];
            }
        }
#pragma unroll
        for (int g = 0; g < GQA_MAX; g++) {
            s[g] += __shfl_xor_sync(0xffffffffu, s[g], 1);
            s[g] += __shfl_xor_sync(0xffffffffu, s[g], 2);
        }
        if (t < n && quad == 0)
#pragma unroll
            for (int g = 0; g < GQA_MAX; g++)
                if (g < G) sc[g * stride + t] = s[g] * scale;
    }
    __syncthreads();
    for (int g = 0; g < G; g++) {
        float* row = sc + g * stride;
        float m = -INFINITY;
        for (int t = tid; t < n; t += SM_THREADS) m = fmaxf(m, row[t]);
        m = block_max(m, red);
        float l = 0;
        for (int t = tid; t < n; t += SM_THREADS) {
            float e = expf(row[t] - m);
            row[t] = e;
            l += e;
        }
        l = block_sum(l, red);
        const float inv = 1.0f / l;
        for (int t = tid; t < n; t += SM_THREADS) row[t] = h2f(f2h(row[t] * inv));
    }
    __syncthreads();
    const int DG = vhd / 8, P = SM_THREADS / DG;
    const int dg = tid % DG, pp = tid / DG;
    float acc[GQA_MAX][8];
#pragma unroll
    for (int g = 0; g < GQA_MAX; g++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[g][j] = 0;
    if (pp < P) {
        for (int t = pp; t < n; t += P) {
            float vf[8];
            unpack8(*(const uint4*)(v + cache_row(tab, bs, t) * vstride + kvh * vhd + 8 * dg), vf);
#pragma unroll
            for (int g = 0; g < GQA_MAX; g++) {
                if (g < G) {
                    const float p = sc[g * stride + t];
#pragma unroll
                    for (int j = 0; j < 8; j++) acc[g][j] += p * vf[j];
                }
            }
        }
    }
    __syncthreads();  // the probabilities are read; their space takes the partial sums
    if (pp < P)
#pragma unroll
        for (int g = 0; g < GQA_MAX; g++)
            if (g < G)
#pragma unroll
                for (int j = 0; j < 8; j++) sc[g * stride + pp * vhd + 8 * dg + j] = acc[g][j];
    __syncthreads();
    for (int e = tid; e < G * vhd; e += SM_THREADS) {
        int g = e / vhd, d = e % vhd;
        float s = 0;
        for (int j = 0; j < P; j++) s += sc[g * stride + j * vhd + d];
        dst[(i64)i * dstride + (h0 + g) * vhd + d] = s;
    }
}

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

__device__ __forceinline__ int split_chunk(int n, int splits) {
    const int c = (n + splits - 1) / splits;
    return (c + SPLIT_CHUNK - 1) / SPLIT_CHUNK * SPLIT_CHUNK;
}

// split_scores puts the scaled scores of positions t0 .. t0+SPLIT_CHUNK-1 below end of
// every head of the group in sc[g*SPLIT_CHUNK + t - t0], summed as attention_smem sums them.
__device__ __forceinline__ void split_scores(float* sc, const float* qs, const uint16_t* k, i64 kstride, int kvh,
                                             int hd, int G, float scale, const int* tab, int bs, int t0, int end) {
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
#pragma unroll
            for (int g = 0; g < GQA_MAX; g++)
                if (g < G)
#pragma unroll
                    for (int j = 0; j < 8; j++) s[g] += qs[g * hd + 8 * c + j] * kf[j];
        }
    }
#pragma unroll
    for (int g = 0; g < GQA_MAX; g++) {
        s[g] += __shfl_xor_sync(0xffffffffu, s[g], 1);
        s[g] += __shfl_xor_sync(0xffffffffu, s[g], 2);
    }
    if (t < end && quad == 0)
#pragma unroll
        for (int g = 0; g < GQA_MAX; g++)
            if (g < G) sc[g * SPLIT_CHUNK + t - t0] = s[g] * scale;
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
                            for (int d = 0; d < 8; d++) acc[g][d] += p * vf[d];
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
        float s = 0;
        int j = 0;
        for (; j + 8 <= nact; j += 8) {
            float x[8];
#pragma unroll
            for (int u = 0; u < 8; u++) x[u] = __ldcg(pr + (i64)(j + u) * vhd);
#pragma unroll
            for (int u = 0; u < 8; u++) s += x[u];
        }
        for (; j < nact; j++) s += __ldcg(pr + (i64)j * vhd);
        dst[(i64)i * dstride + (h0 + g) * vhd + d] = s;
    }
}
