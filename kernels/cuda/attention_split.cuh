// attention_split.cuh: what the split decode attention kernels share (attention_split.cu's
// two launches, attention_split1.cu's one): the sub-chunk and flags, the chunk lengths,
// the query's f16 rounding and the SIMT scores.
#pragma once
#include "common.cuh"

#define SPLIT_CHUNK (SM_THREADS / 4)  // positions scored at a time: four threads each

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

// split_pv_meet adds the P position lanes' p·V sums acc (lane pp's eight dims 8dg ..
// 8dg+7 of each head g < G) in red [P][vhd], one head at a time, and writes each head's
// sum over the lanes, in lane order, to part[((base+g)*splits + c)*vhd + d].
__device__ __forceinline__ void split_pv_meet(float (*acc)[8], float* red, float* part, int G, int P, int pp,
                                              int dg, int vhd, int base, int splits, int c) {
#pragma unroll
    for (int g = 0; g < GQA_MAX; g++) {
        if (g < G) {
            if (pp < P)
#pragma unroll
                for (int d = 0; d < 8; d++) red[pp * vhd + 8 * dg + d] = acc[g][d];
            __syncthreads();
            for (int d = threadIdx.x; d < vhd; d += SM_THREADS) {
                float s = 0;
                for (int j = 0; j < P; j++) s += red[j * vhd + d];
                part[((base + g) * splits + c) * vhd + d] = s;
            }
            __syncthreads();
        }
    }
}

// split_online folds nc scores row[0..nc) into a warp's running max m and sum l (of
// exp(score - m)), lane-strided: the sub-chunk's max first, then its exps against the
// new max, the old sum rescaled.
__device__ __forceinline__ void split_online(const float* row, int nc, int lane, float& m, float& l) {
    float mx = -INFINITY;
    for (int j = lane; j < nc; j += 32) mx = fmaxf(mx, row[j]);
    const float mn = fmaxf(m, warp_max(mx));
    float e = 0;
    for (int j = lane; j < nc; j += 32) e += expf(row[j] - mn);
    l = l * expf(m - mn) + warp_sum(e);
    m = mn;
}

// split_meet combines a head's nact chunk statistics st[j] = (max, sum) into the row's
// max M and writes M and 1 / L (L the sums against M) to *gm and *ginv (lane 0). CG reads
// them at L2 (__ldcg), for statistics other blocks of the same launch wrote.
template <bool CG>
__device__ __forceinline__ void split_meet(const float2* st, int nact, int lane, float* gm, float* ginv) {
    float M = -INFINITY;
    for (int j = lane; j < nact; j += 32) M = fmaxf(M, CG ? __ldcg(&st[j].x) : st[j].x);
    M = warp_max(M);
    float L = 0;
    for (int j = lane; j < nact; j += 32) L += (CG ? __ldcg(&st[j].y) : st[j].y) * expf((CG ? __ldcg(&st[j].x) : st[j].x) - M);
    L = warp_sum(L);
    if (lane == 0) { *gm = M; *ginv = 1.0f / L; }
}
