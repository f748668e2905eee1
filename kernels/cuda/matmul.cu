// matmul.cu: dst[i, r] = dot(w[r, :], xq[i, :]) with xq the activation rows already
// quantized to w's dot partner (common.cuh layouts). Integer sums are exact and each
// block's float formula is the one of quant.Dot; only the order of the float sum over
// blocks differs from the reference.
//
// Grid: (ceil(M / rows per block), ceil(n / NX)); 128 threads, one warp per weight row
// (two for Q4_K), NX activation rows per warp so that each weight byte is read once per
// NX rows. Batch 1 (NX = 1) of every type but F32 has its own kernels (mv1, mv1.cuh).
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
    const int nb = K / 256;
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
        int j = 32 * w + lane;
        if (T == T_F16 || T == T_BF16) j = K;  // their chunks, below
        for (int c = 32 * w + lane; T != T_F32 && 8 * c < K; c += 128) {
            // F16 and BF16: 8-element chunks, each chunk's products summed in float in
            // element order and the chunk sums in double, as mv1_half (mv1x.cuh) does.
            const int j0 = 8 * c, n8 = min(8, K - j0);
            float wv[8];
#pragma unroll
            for (int e = 0; e < 8; e++) wv[e] = e < n8 ? ld(wr, j0 + e) : 0.f;
#pragma unroll
            for (int n = 0; n < NX; n++)
                if (n < ncol) {
                    const uint8_t* xr = X + (i64)(x0 + n) * xstride;
                    float f = 0;
#pragma unroll
                    for (int e = 0; e < 8; e++)
                        if (e < n8) f += wv[e] * ld(xr, j0 + e);
                    acc[n] += (double)f;
                }
        }
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
#pragma unroll
        for (int n = 0; n < NX; n++) {
            const double s = warp_sumd(acc[n]);
            if (lane == 0) red[n][w] = s;
        }
        __syncthreads();
        if (threadIdx.x < ncol) {
            const int n = threadIdx.x;
            D[(i64)(x0 + n) * dstride + r] = (float)((red[n][0] + red[n][1]) + (red[n][2] + red[n][3]));
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

#define Q4K_ROWS 2

template <int NX>
__device__ void mmv_q4_k(MMV_ARGS, int rb) {
    const int lane = threadIdx.x & 31;
    const int r = (rb * 4 + (threadIdx.x >> 5)) * Q4K_ROWS;
    if (r >= M) return;
    const bool hasB = r + 1 < M;
    const int x0 = blockIdx.y * NX, ncol = min(NX, nx - x0);
    const int nb = K / 256;
    const uint8_t* wa = W + (i64)r * wstride;
    const uint8_t* wb = hasB ? wa + wstride : wa;
    const int c = lane & 3;
    float accA[NX], accB[NX];
#pragma unroll
    for (int n = 0; n < NX; n++) accA[n] = accB[n] = 0;
    for (int ib = lane >> 2; ib < nb; ib += 8) {
        const uint8_t* pa = wa + 144 * ib;
        const uint8_t* pb = wb + 144 * ib;
        const uint4 hA = *(const uint4*)pa, qaA = *(const uint4*)(pa + 16 + 32 * c), qbA = *(const uint4*)(pa + 32 + 32 * c);
        const uint4 hB = *(const uint4*)pb, qaB = *(const uint4*)(pb + 16 + 32 * c), qbB = *(const uint4*)(pb + 32 + 32 * c);
#pragma unroll
        for (int n = 0; n < NX; n++) {
            if (n < ncol) {
                const uint8_t* xr = X + (i64)(x0 + n) * xstride;
                const int4* xb = (const int4*)(xr + 256 * ib + 64 * c);
                const int4 x0v = xb[0], x1v = xb[1], x2v = xb[2], x3v = xb[3];
                const int xs[16] = {x0v.x, x0v.y, x0v.z, x0v.w, x1v.x, x1v.y, x1v.z, x1v.w,
                                    x2v.x, x2v.y, x2v.z, x2v.w, x3v.x, x3v.y, x3v.z, x3v.w};
                const float yd = ((const float*)(xr + K))[ib];
                const int4 bs = *(const int4*)((const int*)(xr + Q8K_BSUMS(K)) + 16 * ib + 4 * c);
                int sb;
                int sa = q4k_dot(qaA, qbA, xs, &sb);
                accA[n] += q4k_part(hA, c, sa, sb, yd, bs);
                sa = q4k_dot(qaB, qbB, xs, &sb);
                accB[n] += q4k_part(hB, c, sa, sb, yd, bs);
            }
        }
    }
#pragma unroll
    for (int n = 0; n < NX; n++) {
        const float sA = warp_sum(accA[n]), sB = warp_sum(accB[n]);
        if (lane == 0 && n < ncol) {
            D[(i64)(x0 + n) * dstride + r] = sA;
            if (hasB) D[(i64)(x0 + n) * dstride + r + 1] = sB;
        }
    }
}

// ---- Q6_K (repacked rows): 4 lanes per block, 16-byte loads of ql and qh ----

template <int NX>
__device__ void mmv_q6_k(MMV_ARGS, int rb) {
    int lane = threadIdx.x & 31;
    int r = rb * 4 + (threadIdx.x >> 5);
    if (r >= M) return;
    int x0 = blockIdx.y * NX, ncol = min(NX, nx - x0);
    const int nb = K / 256;
    const uint8_t* wr = W + (i64)r * wstride;
    const int t = lane & 3, h = t >> 1, g = t & 1;
    float acc[NX];
#pragma unroll
    for (int n = 0; n < NX; n++) acc[n] = 0;
#pragma unroll 2
    for (int ib = lane >> 2; ib < nb; ib += 8) {
        const uint8_t* ql = wr + 128 * ib + 64 * h + 16 * g;
        uint4 qa = *(const uint4*)ql, qb = *(const uint4*)(ql + 32);
        uint4 qh = *(const uint4*)(wr + 128 * nb + 64 * ib + 32 * h + 16 * g);
        const int8_t* scs = (const int8_t*)(wr + 192 * nb + 16 * ib + 8 * h + g);
        int s0 = scs[0], s1 = scs[2], s2 = scs[4], s3 = scs[6];
        float d = ldh(wr + 208 * nb + 2 * ib);
        uint32_t A[4] = {qa.x, qa.y, qa.z, qa.w}, B[4] = {qb.x, qb.y, qb.z, qb.w}, H[4] = {qh.x, qh.y, qh.z, qh.w};
        int v[4][4];
#pragma unroll
        for (int k = 0; k < 4; k++) {
            v[0][k] = __vsub4((A[k] & 0x0f0f0f0f) | ((H[k] & 0x03030303) << 4), 0x20202020);
            v[1][k] = __vsub4((B[k] & 0x0f0f0f0f) | (((H[k] >> 2) & 0x03030303) << 4), 0x20202020);
            v[2][k] = __vsub4(((A[k] >> 4) & 0x0f0f0f0f) | (((H[k] >> 4) & 0x03030303) << 4), 0x20202020);
            v[3][k] = __vsub4(((B[k] >> 4) & 0x0f0f0f0f) | (((H[k] >> 6) & 0x03030303) << 4), 0x20202020);
        }
#pragma unroll
        for (int n = 0; n < NX; n++) {
            if (n < ncol) {
                const uint8_t* xr = X + (i64)(x0 + n) * xstride;
                const uint8_t* xb = xr + 256 * ib + 128 * h + 16 * g;
                int sum[4];
#pragma unroll
                for (int s = 0; s < 4; s++) {
                    int4 xv = *(const int4*)(xb + 32 * s);
                    sum[s] = __dp4a(v[s][0], xv.x, __dp4a(v[s][1], xv.y, __dp4a(v[s][2], xv.z, __dp4a(v[s][3], xv.w, 0))));
                }
                float yd = ((const float*)(xr + K))[ib];
                acc[n] += d * yd * (float)(s0 * sum[0] + s1 * sum[1] + s2 * sum[2] + s3 * sum[3]);
            }
        }
    }
#pragma unroll
    for (int n = 0; n < NX; n++) {
        float s = warp_sum(acc[n]);
        if (lane == 0 && n < ncol) D[(i64)(x0 + n) * dstride + r] = s;
    }
}

// ---- Q8_0 (repacked rows): 2 lanes per block, one 16-byte load each ----

template <int NX>
__device__ void mmv_q8_0(MMV_ARGS, int rb) {
    int lane = threadIdx.x & 31;
    int r = rb * 4 + (threadIdx.x >> 5);
    if (r >= M) return;
    int x0 = blockIdx.y * NX, ncol = min(NX, nx - x0);
    const int nb = K / 32;
    const uint8_t* wr = W + (i64)r * wstride;
    float acc[NX];
#pragma unroll
    for (int n = 0; n < NX; n++) acc[n] = 0;
    // Every lane runs the same number of iterations so that the pair shuffle is legal.
    for (int ib0 = 0; ib0 < nb; ib0 += 16) {
        int ib = ib0 + (lane >> 1);
        bool ok = ib < nb;
        int4 q = make_int4(0, 0, 0, 0);
        float dw = 0;
        if (ok) {
            q = *(const int4*)(wr + 32 * ib + 16 * (lane & 1));
            dw = ldh(wr + 32 * nb + 2 * ib);
        }
#pragma unroll
        for (int n = 0; n < NX; n++) {
            if (n < ncol) {
                const uint8_t* xr = X + (i64)(x0 + n) * xstride;
                int s = 0;
                float dx = 0;
                if (ok) {
                    int4 xv = *(const int4*)(xr + 32 * ib + 16 * (lane & 1));
                    s = __dp4a(q.x, xv.x, __dp4a(q.y, xv.y, __dp4a(q.z, xv.z, __dp4a(q.w, xv.w, 0))));
                    dx = ((const float*)(xr + K))[ib];
                }
                s += __shfl_xor_sync(0xffffffffu, s, 1);
                if (ok && (lane & 1) == 0) acc[n] += (float)s * (dw * dx);
            }
        }
    }
#pragma unroll
    for (int n = 0; n < NX; n++) {
        float s = warp_sum(acc[n]);
        if (lane == 0 && n < ncol) D[(i64)(x0 + n) * dstride + r] = s;
    }
}

#define MMV_ONE(NAME, BODY, NX) \
    extern "C" __global__ void __launch_bounds__(128) mmv_##NAME##_##NX(MMV_ARGS) { pdl_entry(); BODY<NX>(W, wstride, X, xstride, D, dstride, M, K, nx, blockIdx.x); }
#define MMV(NAME, BODY) MMV_ONE(NAME, BODY, 1) MMV_ONE(NAME, BODY, 2) MMV_ONE(NAME, BODY, 4) MMV_ONE(NAME, BODY, 8)
// MMV_FAST: the batch-1 kernel of every type but F32 is mv1 (launched with the
// activation row's bytes of dynamic shared memory, mv1_bytes); mmv_*_1e is the same
// product with its weights loaded evict-first (wev; mv1.cuh).
// MV1_LB is the batch-1 kernels' launch bounds (mmv_*_1, mmv_*_1e, mmv_multi*);
// MV1_LB_LO those of the 32-value types' (mv1lo.cuh's mv1_q4q5, two steps in flight):
// four blocks an SM, so at most 128 registers (168 unbounded, three blocks an SM): 8B
// Q4_0 tg128 on the H200 430.7 / 430.1 against 411.4 / 411.8, Q4_1 426.4 / 427.2 against
// 425.6 / 425.5 (session 50).
#ifndef LO50_MINB
#define LO50_MINB 4
#endif
#define MV1_LB __launch_bounds__(128)
#define MV1_LB_LO __launch_bounds__(128, LO50_MINB)
#define MMV_FAST_LB(NAME, BODY, T, LB) \
    extern "C" __global__ void LB mmv_##NAME##_1(MMV_ARGS) { pdl_defer(); mv1<T, true>(W, wstride, X, D, M, K, blockIdx.x); } \
    extern "C" __global__ void LB mmv_##NAME##_1e(MMV_ARGS) { pdl_defer(); mv1<T, true, false, true>(W, wstride, X, D, M, K, blockIdx.x); } \
    MMV_ONE(NAME, BODY, 2) MMV_ONE(NAME, BODY, 4) MMV_ONE(NAME, BODY, 8)
#define MMV_FAST(NAME, BODY, T) MMV_FAST_LB(NAME, BODY, T, MV1_LB)

#define GEN(T) template <int NX> __device__ void gen_##T(MMV_ARGS, int rb) { mmv_generic<T, NX>(W, wstride, X, xstride, D, dstride, M, K, nx, rb); }
GEN(T_F32)
GEN(T_F16)
GEN(T_BF16)
GEN(T_Q4_0)
GEN(T_Q4_1)
GEN(T_Q5_0)
GEN(T_Q5_1)
GEN(T_Q2_K)
GEN(T_Q3_K)

MMV(f32, gen_T_F32)
MMV_FAST(f16, gen_T_F16, T_F16)
MMV_FAST(bf16, gen_T_BF16, T_BF16)
MMV_FAST_LB(q4_0, gen_T_Q4_0, T_Q4_0, MV1_LB_LO)
MMV_FAST_LB(q4_1, gen_T_Q4_1, T_Q4_1, MV1_LB_LO)
MMV_FAST_LB(q5_0, gen_T_Q5_0, T_Q5_0, MV1_LB_LO)
MMV_FAST_LB(q5_1, gen_T_Q5_1, T_Q5_1, MV1_LB_LO)
MMV_FAST(q2_k, gen_T_Q2_K, T_Q2_K)
MMV_FAST(q3_k, gen_T_Q3_K, T_Q3_K)
MMV_FAST(q5_k, mmv_q5_k_nx, T_Q5_K)
MMV_FAST(q4_k, mmv_q4_k, T_Q4_K)
MMV_FAST(q6_k, mmv_q6_k, T_Q6_K)
MMV_FAST(q8_0, mmv_q8_0, T_Q8_0)

// mmv_id_*: mat-vecs of rows that each have their own matrix (a mixture of experts'
// (token, slot) pairs; per-head projections): row z = blockIdx.x / nrb multiplies
// matrix e (estride bytes apart in W; e = ids[z], or z / epz when ids is null) by
// activation row z / xdiv into dst row z; nrb row blocks per row. Each dot is computed
// as by mmv_*_1 (for Q4_K, Q6_K and Q8_0: mv1, with the same dynamic shared memory).
// With gridDim.y = 2 the y = 1 blocks compute a second product of the same rows, experts
// and activations (a mixture of experts' up beside its gate, a head's q_pe beside its
// q_nope): matrices W2 (the same spacing), M2 rows (nrb2 row blocks) into D2.
#define MMV_ID_ARGS MMV_ARGS, const int *ids, i64 estride, int xdiv, int nrb, int epz, const uint8_t *W2, float *D2, \
                    i64 dstride2, int M2, int nrb2
#define MMV_ID_SECOND()                                                     \
    if (blockIdx.y) {                                                       \
        if ((int)blockIdx.x >= nrb2 * (int)(gridDim.x / nrb)) return;      \
        W = W2, D = D2, dstride = dstride2, M = M2, nrb = nrb2;             \
    }
#define MMV_ID(NAME, BODY) \
    extern "C" __global__ void __launch_bounds__(128) mmv_id_##NAME(MMV_ID_ARGS) { pdl_entry(); \
        MMV_ID_SECOND() \
        const int z = blockIdx.x / nrb; \
        const int e = ids ? ids[z] : z / epz; \
        BODY<1>(W + (i64)e * estride, wstride, X + (i64)(z / xdiv) * xstride, xstride, D + (i64)z * dstride, dstride, M, K, 1, \
                blockIdx.x % nrb); \
    }
MMV_ID(f32, gen_T_F32)
#define MMV_ID_FAST(NAME, T) \
    extern "C" __global__ void __launch_bounds__(128) mmv_id_##NAME(MMV_ID_ARGS) { pdl_entry(); \
        MMV_ID_SECOND() \
        const int z = blockIdx.x / nrb; \
        const int e = ids ? ids[z] : z / epz; \
        mv1<T, false, true>(W + (i64)e * estride, wstride, X + (i64)(z / xdiv) * xstride, D + (i64)z * dstride, M, K, blockIdx.x % nrb); \
    }
MMV_ID_FAST(q4_0, T_Q4_0)
MMV_ID_FAST(q5_0, T_Q5_0)
MMV_ID_FAST(q4_k, T_Q4_K)
MMV_ID_FAST(q6_k, T_Q6_K)
MMV_ID_FAST(q8_0, T_Q8_0)
MMV_ID_FAST(q5_k, T_Q5_K)
MMV_ID_FAST(f16, T_F16)
MMV_ID_FAST(bf16, T_BF16)
MMV_ID_FAST(q2_k, T_Q2_K)
MMV_ID_FAST(q3_k, T_Q3_K)
MMV_ID_FAST(q4_1, T_Q4_1)
MMV_ID_FAST(q5_1, T_Q5_1)

// mmv_idw_*: mmv_id_* for runs of per-head products (ids null: matrix z / epz) whose
// matrices are weights (Backend.Weight's memory, which no kernel writes): opened by
// pdl_defer, so each block's first weight loads come before the wait (mv1's PRE), as the
// batch-1 products' do. DeepSeek-V2's query, attn_k_b and attn_v_b heads take them.
#define MMV_IDW(NAME, T) \
    extern "C" __global__ void __launch_bounds__(128) mmv_idw_##NAME(MMV_ID_ARGS) { pdl_defer(); \
        MMV_ID_SECOND() \
        const int z = blockIdx.x / nrb; \
        mv1<T, true, true>(W + (i64)(z / epz) * estride, wstride, X + (i64)(z / xdiv) * xstride, D + (i64)z * dstride, M, K, \
                           blockIdx.x % nrb); \
    }
MMV_IDW(q4_0, T_Q4_0)
MMV_IDW(q5_0, T_Q5_0)
MMV_IDW(q4_k, T_Q4_K)
MMV_IDW(q6_k, T_Q6_K)
MMV_IDW(q8_0, T_Q8_0)
MMV_IDW(q5_k, T_Q5_K)
MMV_IDW(f16, T_F16)
MMV_IDW(bf16, T_BF16)
MMV_IDW(q2_k, T_Q2_K)
MMV_IDW(q3_k, T_Q3_K)
MMV_IDW(q4_1, T_Q4_1)
MMV_IDW(q5_1, T_Q5_1)

// mmv_multi: up to three projections of one activation row in one launch (the fused
// Q/K/V and gate/up products of a decode step), each Q4_K or Q6_K (mmv_multi), Q5_K or
// Q6_K (mmv_multi_q5_k: a Q5_K_M model's), all Q8_0 (mmv_multi_q8_0), Q4_0 or Q5_0
// (mmv_multi_q4_0), Q4_1 or Q5_1 (mmv_multi_q4_1): kernels of their own, so that one
// type's registers do not bound another's occupancy, each dot as by
// mv1 (with the same dynamic shared memory); grid: the projections' row blocks
// (mv1_rows) one after the other (M = 0 for none). The _e forms load the weights
// evict-first (wev; mv1.cuh).
#define MMV_MULTI_ARGS const uint8_t *X, i64 xstride, int K, const uint8_t *W0, i64 ws0, float *D0, int M0, int t0, \
                       const uint8_t *W1, i64 ws1, float *D1, int M1, int t1, const uint8_t *W2, i64 ws2, float *D2, \
                       int M2, int t2
template <int Q, bool EF>
__device__ __forceinline__ void mmv_multi_body(MMV_MULTI_ARGS) {
    int b = blockIdx.x;
    const int rpb0 = Q == 2 ? mv1_rows_q5(t0) : mv1_rows(t0), rpb1 = Q == 2 ? mv1_rows_q5(t1) : mv1_rows(t1);
    const int nb0 = (M0 + rpb0 - 1) / rpb0, nb1 = (M1 + rpb1 - 1) / rpb1;
    const uint8_t* W = W0;
    i64 ws = ws0;
    float* D = D0;
    int M = M0, T = t0;
    if (b >= nb0 + nb1) {
        b -= nb0 + nb1;
        W = W2; ws = ws2; D = D2; M = M2; T = t2;
    } else if (b >= nb0) {
        b -= nb0;
        W = W1; ws = ws1; D = D1; M = M1; T = t1;
    }
    if constexpr (Q == 1) {
        mv1<T_Q8_0, true, false, EF>(W, ws, X, D, M, K, b);
    } else if constexpr (Q == 4) {  // Q4_0, Q5_0
        if (T == T_Q4_0) mv1<T_Q4_0, true, false, EF>(W, ws, X, D, M, K, b);
        else mv1<T_Q5_0, true, false, EF>(W, ws, X, D, M, K, b);
    } else if constexpr (Q == 5) {  // Q4_1, Q5_1
        if (T == T_Q4_1) mv1<T_Q4_1, true, false, EF>(W, ws, X, D, M, K, b);
        else mv1<T_Q5_1, true, false, EF>(W, ws, X, D, M, K, b);
    } else {
        if (Q == 2 && T == T_Q5_K)
            mv1<T_Q5_K, true, false, EF>(W, ws, X, D, M, K, b);
        else if (Q == 0 && T == T_Q4_K)
            mv1<T_Q4_K, true, false, EF>(W, ws, X, D, M, K, b);
        else
            mv1<T_Q6_K, true, false, EF>(W, ws, X, D, M, K, b);
    }
}
#define MMV_MULTI(NAME, Q, EF) MMV_MULTI_LB(NAME, Q, EF, MV1_LB)
#define MMV_MULTI_LB(NAME, Q, EF, LB) \
    extern "C" __global__ void LB NAME(MMV_MULTI_ARGS) { pdl_defer(); \
        mmv_multi_body<Q, EF>(X, xstride, K, W0, ws0, D0, M0, t0, W1, ws1, D1, M1, t1, W2, ws2, D2, M2, t2); \
    }
MMV_MULTI(mmv_multi, 0, false)
MMV_MULTI(mmv_multi_q8_0, 1, false)
MMV_MULTI(mmv_multi_q5_k, 2, false)
MMV_MULTI(mmv_multi_e, 0, true)
MMV_MULTI(mmv_multi_q8_0_e, 1, true)
MMV_MULTI(mmv_multi_q5_k_e, 2, true)
MMV_MULTI_LB(mmv_multi_q4_0, 4, false, MV1_LB_LO)
MMV_MULTI_LB(mmv_multi_q4_1, 5, false, MV1_LB_LO)
MMV_MULTI_LB(mmv_multi_q4_0_e, 4, true, MV1_LB_LO)
MMV_MULTI_LB(mmv_multi_q4_1_e, 5, true, MV1_LB_LO)
