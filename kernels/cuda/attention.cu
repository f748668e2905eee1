// attention.cu: causal attention over the F16 KV cache, through the paged block table.
// One block of 128 threads per (query row, head): pass 1 finds the max score and the
// softmax sum (online, per warp, in float with expf), pass 2 recomputes each score,
// rounds its probability to f16 as llama.cpp does, and accumulates V. Warps take
// positions round robin; lanes split the head dims. Head dims up to MAX_HEAD: 576 is
// MLA's latent row (DeepSeek-V2: 64 rope + 512 latent dims, one KV head, V is K).
// The query is rounded to f16 and the probabilities too, so every product of one with a
// cache value (f16) is exact in a float: each sum's step is a fused multiply-add
// (__fmaf_rn), which rounds once where the multiply and add (-fmad=false) did, the same
// bits in one instruction fewer.
#include "common.cuh"
#include "attention_split.cuh"

#define ATT_WARPS 4
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
        for (int d = lane; d < hd; d += 32) s = __fmaf_rn(qs[d], h2f(kr[d]), s);
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
        for (int d = lane; d < hd; d += 32) s = __fmaf_rn(qs[d], h2f(kr[d]), s);
        s = warp_sum(s) * scale;
        float e = expf(s - M);
        float p = h2f(f2h(e * inv));
        const uint16_t* vr = v + row * vstride + kvh * vhd;
#pragma unroll
        for (int j = 0; j < MAX_HEAD / 32; j++) {
            int d = lane + 32 * j;
            if (d < vhd) acc[j] = __fmaf_rn(p, h2f(vr[d]), acc[j]);
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
                    if (lane + 32 * j < hd) s[g] = __fmaf_rn(qs[g][lane + 32 * j], kv[j], s[g]);
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
                    if (lane + 32 * j < hd) s[g] = __fmaf_rn(qs[g][lane + 32 * j], kv[j], s[g]);
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
                for (int j = 0; j < GQA_HEAD / 32; j++) acc[g][j] = __fmaf_rn(p, vv[j], acc[g][j]);
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
    split_q(qs, q, qstride, i, h0, G, hd);
    __syncthreads();
    for (int t0 = 0; t0 < n; t0 += SPLIT_CHUNK) split_scores(sc + t0, qs, k, kstride, kvh, hd, G, scale, tab, bs, t0, n, stride);
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
#pragma unroll 4
        for (int t = pp; t < n; t += P) {
            float vf[8];
            unpack8(*(const uint4*)(v + cache_row(tab, bs, t) * vstride + kvh * vhd + 8 * dg), vf);
#pragma unroll
            for (int g = 0; g < GQA_MAX; g++) {
                if (g < G) {
                    const float p = sc[g * stride + t];
#pragma unroll
                    for (int j = 0; j < 8; j++) acc[g][j] = __fmaf_rn(p, vf[j], acc[g][j]);
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

