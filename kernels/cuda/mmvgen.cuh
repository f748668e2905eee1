// mmvgen.cuh: matmul.cu's generic products (mmv_generic: one lane a weight block, any
// type in its GGUF layout) and block_dot, the float formula of one block of each type that
// every product of matmul.cu and mv1lo.cuh rounds as (its integer sums exact). The
// products of 2-8 activation rows of the types without their own kernels (and F32) run
// here; batch 1 runs mv1 (mv1.cuh).
#pragma once
#include "mv1.cuh"

#define MMV_ARGS const uint8_t *W, i64 wstride, const uint8_t *X, i64 xstride, float *D, i64 dstride, int M, int K, int nx

// ---- generic: one lane per weight block, byte loads; any layout in GGUF form ----

template <int T>
__device__ __forceinline__ float block_dot(const uint8_t* w, int ib, const uint8_t* x, int K) {
    const int8_t* xq = (const int8_t*)x;
    if (T == T_Q4_0 || T == T_Q5_0) {
        const uint8_t* b = w + (T == T_Q4_0 ? 18 : 22) * ib;
        const uint8_t* qs = b + (T == T_Q4_0 ? 2 : 6);
        uint32_t qh = 0;
        if (T == T_Q5_0) qh = (uint32_t)b[2] | ((uint32_t)b[3] << 8) | ((uint32_t)b[4] << 16) | ((uint32_t)b[5] << 24);
        const int8_t* xb = xq + 32 * ib;
        int sumi = 0;
        for (int j = 0; j < 16; j++) {
            int v0 = qs[j] & 0x0f, v1 = qs[j] >> 4;
            if (T == T_Q5_0) { v0 |= ((qh >> j) & 1) << 4; v1 |= ((qh >> (j + 16)) & 1) << 4; v0 -= 16; v1 -= 16; }
            else { v0 -= 8; v1 -= 8; }
            sumi += v0 * xb[j] + v1 * xb[j + 16];
        }
        float dw = ldh(b), dx = ((const float*)(x + K))[ib];
        if (T == T_Q4_0) return (float)sumi * dw * dx;
        return dw * dx * (float)sumi;
    }
    if (T == T_Q4_1 || T == T_Q5_1) {
        const uint8_t* b = w + (T == T_Q4_1 ? 20 : 24) * ib;
        const uint8_t* qs = b + (T == T_Q4_1 ? 4 : 8);
        uint32_t qh = 0;
        if (T == T_Q5_1) qh = (uint32_t)b[4] | ((uint32_t)b[5] << 8) | ((uint32_t)b[6] << 16) | ((uint32_t)b[7] << 24);
        const int8_t* xb = xq + 32 * ib;
        int sumi = 0;
        for (int j = 0; j < 16; j++) {
            int v0 = qs[j] & 0x0f, v1 = qs[j] >> 4;
            if (T == T_Q5_1) { v0 |= ((qh >> j) & 1) << 4; v1 |= ((qh >> (j + 16)) & 1) << 4; }
            sumi += v0 * xb[j] + v1 * xb[j + 16];
        }
        const float* ds = (const float*)(x + K);
        float dd = ldh(b) * ds[ib];
        return dd * (float)sumi + ldh(b + 2) * ds[K / 32 + ib];
    }
    const int8_t* xb = xq + 256 * ib;
    float yd = ((const float*)(x + K))[ib];
    const int* bsums = (const int*)(x + Q8K_BSUMS(K)) + 16 * ib;
    if (T == T_Q2_K) {
        const uint8_t* b = w + 84 * ib;
        int summs = 0;
        for (int j = 0; j < 16; j++) summs += bsums[j] * (b[j] >> 4);
        float dall = yd * ldh(b + 80), dmin = yd * ldh(b + 82);
        int isum = 0;
        for (int g = 0; g < 16; g++) {
            int isuml = 0;
            for (int i = 16 * g; i < 16 * g + 16; i++) isuml += xb[i] * q2_at(b + 16, i);
            isum += (b[g] & 0x0f) * isuml;
        }
        return dall * (float)isum - dmin * (float)summs;
    }
    if (T == T_Q3_K) {
        const uint8_t* b = w + 110 * ib;
        int total = 0;
        for (int g = 0; g < 16; g++) {
            int s = 0;
            for (int i = 16 * g; i < 16 * g + 16; i++) s += xb[i] * q3_at(b, b + 32, i);
            total += q3_scale(g, b + 96) * s;
        }
        return ldh(b + 108) * yd * (float)total;
    }
    if (T == T_Q5_K) {
        const uint8_t* b = w + 176 * ib;
        int total = 0, mins = 0;
        for (int g = 0; g < 8; g++) {
            int sc, m, s = 0;
            scale_min_k4(g, b + 4, &sc, &m);
            for (int i = 32 * g; i < 32 * g + 32; i++) s += xb[i] * q5k_at(b + 16, b + 48, i);
            total += sc * s;
            mins += m * (bsums[2 * g] + bsums[2 * g + 1]);
        }
        return ldh(b) * yd * (float)total - ldh(b + 2) * yd * (float)mins;
    }
    return __int_as_float(0x7fc00000);
}

// mmv_generic_lanes is the lanes of mmv_generic a quantized row of nb blocks takes: nb
// rounded up to a power of two, at most 32 (a warp then takes 32 / L rows); its F32,
// F16 and BF16 rows take a block each. matmul.go's rowsPerBlock says the same.
__device__ __forceinline__ int mmv_generic_lanes(int nb) { return nb >= 32 ? 32 : nb <= 1 ? 1 : 1 << (32 - __clz(nb - 1)); }

// warps4_meet is a block's row: its four warps' double sums (red[w], warp w's) met in
// warp order, then rounded to float. mmv_generic's F32, F16 and BF16 rows and
// mmv_f32_1w (matmul.cu) end so, and a router's logits depend on that order.
__device__ __forceinline__ float warps4_meet(const double* red) { return (float)((red[0] + red[1]) + (red[2] + red[3])); }

template <int T, int NX>
__device__ void mmv_generic(MMV_ARGS, int rb) {
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const int x0 = blockIdx.y * NX, ncol = min(NX, nx - x0);
    if (T == T_F32 || T == T_F16 || T == T_BF16) {
        // A block a row: warp w's lanes sum elements 32w + lane, +128, ... (in double: a
        // router's logits, whose near-ties pick experts; each product is exact there, so
        // the order of the sums hardly shows in the float result); MV_FU of them are
        // loaded at once, so that a row is a few round trips, not one per 32 elements.
        // F16 and BF16 rows take chunks of 8 (the batch-1 kernel's rounding).
        // The warps' sums meet in shared memory in warp order.
        constexpr int MV_FU = 8;
        __shared__ double red[NX][4];
        const int r = rb;
        if (r >= M) return;
        const uint8_t* wr = W + (i64)r * wstride;
        auto ld = [&](const uint8_t* row, int j) {
            return T == T_F32 ? ((const float*)row)[j] : T == T_F16 ? h2f(((const uint16_t*)row)[j]) : bf2f(((const uint16_t*)row)[j]);
        };
        double acc[NX];
#pragma unroll
        for (int n = 0; n < NX; n++) acc[n] = 0;
        if (T != T_F32) {
            // F16 and BF16: 8-element chunks, each chunk's products summed in float in
            // element order and the chunk sums in double, as mv1_half (mv1x.cuh) does.
            for (int c = 32 * w + lane; 8 * c < K; c += 128) {
                const int j0 = 8 * c, n8 = min(8, K - j0);
                float wv[8];
#pragma unroll
                for (int e = 0; e < 8; e++) wv[e] = e < n8 ? ld(wr, j0 + e) : 0.f;
#pragma unroll
                for (int n = 0; n < NX; n++)
                    if (n < ncol) acc[n] += (double)half_chunk<T == T_BF16>(wv, (const uint16_t*)(X + (i64)(x0 + n) * xstride) + j0, n8);
            }
        } else {
            int j = 32 * w + lane;
            for (; j + 128 * (MV_FU - 1) < K; j += 128 * MV_FU) {
                float wv[MV_FU], xv[MV_FU][NX];
#pragma unroll
                for (int u = 0; u < MV_FU; u++) {
                    wv[u] = ld(wr, j + 128 * u);
#pragma unroll
                    for (int n = 0; n < NX; n++) xv[u][n] = n < ncol ? ld(X + (i64)(x0 + n) * xstride, j + 128 * u) : 0.f;
                }
#pragma unroll
                for (int u = 0; u < MV_FU; u++)
#pragma unroll
                    for (int n = 0; n < NX; n++)
                        if (n < ncol) acc[n] += (double)(wv[u] * xv[u][n]);
            }
            for (; j < K; j += 128) {
                const float wv = ld(wr, j);
#pragma unroll
                for (int n = 0; n < NX; n++)
                    if (n < ncol) acc[n] += (double)(wv * ld(X + (i64)(x0 + n) * xstride, j));
            }
        }
#pragma unroll
        for (int n = 0; n < NX; n++) {
            const double s = warp_sumd(acc[n]);
            if (lane == 0) red[n][w] = s;
        }
        __syncthreads();
        if (threadIdx.x < ncol) {
            const int n = threadIdx.x;
            D[(i64)(x0 + n) * dstride + r] = warps4_meet(red[n]);
        }
        return;
    }
    // Quantized rows: L lanes a row (mmv_generic_lanes), lane l of a row taking blocks l,
    // l + L, ...; the sums meet by shuffles within the row's lanes (with L = 32 the whole
    // warp's, as for long rows; a short row's idle lanes would only add zeros).
    const int nb = K / (T == T_Q2_K || T == T_Q3_K || T == T_Q5_K ? 256 : 32);
    const int L = mmv_generic_lanes(nb), gl = lane & (L - 1);
    const int r = (rb * 4 + w) * (32 / L) + lane / L;
    const bool ok = r < M;
    const uint8_t* wr = W + (i64)(ok ? r : 0) * wstride;
    float acc[NX];
#pragma unroll
    for (int n = 0; n < NX; n++) acc[n] = 0;
    for (int ib = gl; ok && ib < nb; ib += L) {
#pragma unroll
        for (int n = 0; n < NX; n++)
            if (n < ncol) acc[n] += block_dot<T>(wr, ib, X + (i64)(x0 + n) * xstride, K);
    }
#pragma unroll
    for (int n = 0; n < NX; n++) {
        float s = acc[n];
        for (int o = L / 2; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (gl == 0 && ok && n < ncol) D[(i64)(x0 + n) * dstride + r] = s;
    }
}
