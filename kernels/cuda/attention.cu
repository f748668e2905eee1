// attention.cu: causal attention over the F16 KV cache, through the paged block table.
// One block of 128 threads per (query row, head): pass 1 finds the max score and the
// softmax sum (online, per warp), pass 2 recomputes each score, rounds its probability to
// f16 as llama.cpp does, and accumulates V. Warps take positions round robin; lanes
// split the head dims.
#include "common.cuh"

#define ATT_WARPS 4
#define MAX_HEAD 256

__device__ __forceinline__ i64 cache_row(const int* tab, int bs, int t) {
    return tab ? (i64)tab[t / bs] * bs + t % bs : (i64)t;
}

// q [n, nhead*hd] F32 (row stride qstride floats); k, v F16 rows of kstride, vstride
// halves; dst [n, nhead*vhd] F32; table I32 [seqs, tcols] or null; seq I32 [n].
extern "C" __global__ void __launch_bounds__(128)
attention_f16(float* dst, i64 dstride, const float* q, i64 qstride, const uint16_t* k, i64 kstride,
              const uint16_t* v, i64 vstride, const int* pos, int nhead, int nkv, int hd, int vhd,
              float scale, const int* table, int tcols, const int* seq, int bs) {
    __shared__ float qs[MAX_HEAD];
    __shared__ float wm[ATT_WARPS];
    __shared__ double wl[ATT_WARPS];
    __shared__ float out[ATT_WARPS][MAX_HEAD];
    const int i = blockIdx.x, h = blockIdx.y;
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const int kvh = h / (nhead / nkv);
    const int n = pos[i] + 1;
    const int* tab = table ? table + (i64)seq[i] * tcols : 0;
    for (int d = threadIdx.x; d < hd; d += blockDim.x) qs[d] = h2f(f2h(q[(i64)i * qstride + h * hd + d]));
    __syncthreads();

    float m = -INFINITY;
    double l = 0;
    for (int t = w; t < n; t += ATT_WARPS) {
        const uint16_t* kr = k + cache_row(tab, bs, t) * kstride + kvh * hd;
        float s = 0;
        for (int d = lane; d < hd; d += 32) s += qs[d] * h2f(kr[d]);
        s = warp_sum(s) * scale;
        if (s > m) {
            l = l * exp((double)(m - s)) + 1.0;
            m = s;
        } else {
            l += exp((double)(s - m));
        }
    }
    if (lane == 0) { wm[w] = m; wl[w] = l; }
    __syncthreads();
    float M = wm[0];
    for (int j = 1; j < ATT_WARPS; j++) M = fmaxf(M, wm[j]);
    double L = 0;
    for (int j = 0; j < ATT_WARPS; j++)
        if (wm[j] != -INFINITY) L += wl[j] * exp((double)(wm[j] - M));
    const float inv = (float)(1.0 / L);

    float acc[MAX_HEAD / 32];
#pragma unroll
    for (int j = 0; j < MAX_HEAD / 32; j++) acc[j] = 0;
    for (int t = w; t < n; t += ATT_WARPS) {
        i64 row = cache_row(tab, bs, t);
        const uint16_t* kr = k + row * kstride + kvh * hd;
        float s = 0;
        for (int d = lane; d < hd; d += 32) s += qs[d] * h2f(kr[d]);
        s = warp_sum(s) * scale;
        float e = (float)exp((double)(s - M));
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
