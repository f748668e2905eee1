// matmul.cu: dst[i, r] = dot(w[r, :], xq[i, :]) with xq the activation rows already
// quantized to w's dot partner (common.cuh layouts). Integer sums are exact and each
// block's float formula is the one of quant.Dot; only the order of the float sum over
// blocks differs from the reference.
//
// Grid: (ceil(M / rows per block), ceil(n / NX)); 128 threads, one warp per weight row
// (two for Q4_K), NX activation rows per warp so that each weight byte is read once per
// NX rows. Batch 1 (NX = 1) of every type but F32 has its own kernels (mv1, mv1.cuh).
#include "mmvgen.cuh"

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

// mmv_f32_1w: mmv_f32_1 (mmv_generic's F32 row: a block a row, lane l of warp w summing
// elements 32w + l, +128, ... in double in that order, the warps' sums met in warp order)
// over weights, which no kernel writes: each lane's first MV_FW weights are loaded before
// the wait, so a small F32 product (a mixture of experts' router, 64 x 2,048: all of it)
// waits for no weight load after the kernel before it. The same bits as mmv_f32_1.
#define MV_FW 16
extern "C" __global__ void __launch_bounds__(128) mmv_f32_1w(MMV_ARGS) {
    pdl_defer();
    __shared__ double red[4];
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, r = blockIdx.x, j0 = 32 * w + lane;
    if (r >= M) return;
    const float* wr = (const float*)(W + (i64)r * wstride);
    const float* xr = (const float*)X;
    float wv[MV_FW], xv[MV_FW];
#pragma unroll
    for (int u = 0; u < MV_FW; u++) wv[u] = j0 + 128 * u < K ? wr[j0 + 128 * u] : 0.f;
    pdl_wait();
#pragma unroll
    for (int u = 0; u < MV_FW; u++) xv[u] = j0 + 128 * u < K ? xr[j0 + 128 * u] : 0.f;
    double acc = 0;
#pragma unroll
    for (int u = 0; u < MV_FW; u++)
        if (j0 + 128 * u < K) acc += (double)(wv[u] * xv[u]);
    for (int j = j0 + 128 * MV_FW; j < K; j += 128) acc += (double)(wr[j] * xr[j]);
    const double s = warp_sumd(acc);
    if (lane == 0) red[w] = s;
    __syncthreads();
    if (threadIdx.x == 0) D[r] = warps4_meet(red);
}
// mmv_f32_norm_1w: a decode row's router logits from the residual sum itself: D[r] is
// mmv_f32_1w's row r of W (F32 weights, K = 128 U columns) times the row that
// add_rms_norm_q8_k_1 would write as its dst from a + b and the norm weights nw, with
// both kernels' bits, so that the router can run beside the norm instead of after it
// (a branch; DeepSeek-V2's MoE layers). Thread t of block r takes columns t + 128 u: the
// columns add_rms_norm_q8_k_1's threads t (u even) and t + 128 (u odd) take, whose
// double sums of squares it forms in their orders and meets as that kernel does (warp w
// holds its warps w and w + 4, lane for lane), and the columns mmv_f32_1w's thread t
// takes, in its order. Every block reads all of a and b; none writes them.
template <int U>
__device__ __forceinline__ void f32_norm_row(float* D, const float* W, i64 wstride, const float* a, const float* b,
                                             const float* nw, int K, float eps, double* part, double* red) {
    const int t = threadIdx.x, lane = t & 31, w = t >> 5, r = blockIdx.x;
    const float* wr = (const float*)((const uint8_t*)W + (i64)r * wstride);
    float rw[U], gw[U], s[U];
#pragma unroll
    for (int u = 0; u < U; u++) rw[u] = wr[t + 128 * u];
    pdl_wait();  // nw after it: a model's norm weights are rows it wrote (New), not Weights
#pragma unroll
    for (int u = 0; u < U; u++) gw[u] = nw[t + 128 * u], s[u] = a[t + 128 * u] + b[t + 128 * u];
    double s0 = 0, s1 = 0;
#pragma unroll
    for (int k = 0; k < U / 2; k++) {
        s0 += (double)s[2 * k] * (double)s[2 * k];
        s1 += (double)s[2 * k + 1] * (double)s[2 * k + 1];
    }
    s0 = warp_sumd(s0);
    s1 = warp_sumd(s1);
    if (lane == 0) part[w] = s0, part[w + 4] = s1;
    __syncthreads();
    const float scale = rms_scale(part, 8, K, eps);
    double acc = 0;
#pragma unroll
    for (int u = 0; u < U; u++) acc += (double)(rw[u] * (s[u] * scale * gw[u]));
    acc = warp_sumd(acc);
    if (lane == 0) red[w] = acc;
    __syncthreads();
    if (t == 0) D[r] = warps4_meet(red);
}
extern "C" __global__ void __launch_bounds__(128) mmv_f32_norm_1w(float* D, const float* W, i64 wstride, const float* a,
                                                                   const float* b, const float* nw, int K, float eps) {
    pdl_defer();
    __shared__ double part[8], red[4];
    if (K == 2048)
        f32_norm_row<16>(D, W, wstride, a, b, nw, K, eps, part, red);
    else  // 4096: the host takes no other widths
        f32_norm_row<32>(D, W, wstride, a, b, nw, K, eps, part, red);
}
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

// mmv_id_q5p: mmv_id_q8_0 over a widened Q5_0 weight's packed copy (q5p_pack: 22 bytes a
// block against the widened rows' 34; mv1_q5p), with its bits; W, wstride and estride
// are the copy's. The host takes it for the routed downs with EMBER_CUDA_Q5P (q5p.go).
extern "C" __global__ void __launch_bounds__(128) mmv_id_q5p(MMV_ID_ARGS) { pdl_entry();
    MMV_ID_SECOND()
    extern __shared__ __align__(16) uint8_t q5p_x[];
    const int z = blockIdx.x / nrb;
    const int e = ids ? ids[z] : z / epz;
    const int n = mv1_bytes(T_Q8_0, K), wr = (blockIdx.x % nrb) * 4 + (int)(threadIdx.x >> 5);
    const uint8_t* Wz = W + (i64)e * estride;
    const uint8_t* Xz = X + (i64)(z / xdiv) * xstride;
    if (dyn_smem_size() >= (unsigned)n) mv1_q5p<true, Q80_ID_R1, Q80_ID_S, wev(true)>(Wz, wstride, Xz, q5p_x, n, D + (i64)z * dstride, M, K, wr);
    else mv1_q5p<false, Q80_ID_R1, Q80_ID_S, wev(true)>(Wz, wstride, Xz, q5p_x, n, D + (i64)z * dstride, M, K, wr);
}

// q5p_pack writes P, the packed copy (rows of (22 nb + 15) & ~15 bytes: mv1_q5p's layout)
// of M rows of a widened Q5_0 weight W (Q8_0 rows of wstride bytes in pack's device
// layout, nb blocks a row, every value in -16..15): a thread a (row, block).
extern "C" __global__ void q5p_pack(const uint8_t* W, i64 wstride, int M, int nb, uint8_t* P) { pdl_entry();
    const i64 ps = (22 * nb + 15) & ~15;
    for (i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x; t < (i64)M * nb; t += (i64)gridDim.x * blockDim.x) {
        const i64 r = t / nb;
        const int ib = (int)(t - r * nb);
        const uint8_t* v = W + r * wstride + 32 * ib;
        uint8_t* o = P + r * ps;
        uint32_t qh = 0;
        uint8_t u[32];
        for (int j = 0; j < 32; j++) {
            u[j] = (uint8_t)((int)(int8_t)v[j] + 16);  // 0..31
            qh |= (uint32_t)(u[j] >> 4) << j;
        }
        for (int h = 0; h < 2; h++)
            for (int k = 0; k < 4; k++) {
                const int a = 16 * h + k;
                o[16 * ib + 8 * h + k] = (uint8_t)((u[a] & 15) | (u[a + 4] & 15) << 4);
                o[16 * ib + 8 * h + 4 + k] = (uint8_t)((u[a + 8] & 15) | (u[a + 12] & 15) << 4);
            }
        *(uint32_t*)(o + 16 * (i64)nb + 4 * ib) = qh;
        o[20 * (i64)nb + 2 * ib] = W[r * wstride + 32 * nb + 2 * ib];
        o[20 * (i64)nb + 2 * ib + 1] = W[r * wstride + 32 * nb + 2 * ib + 1];
    }
}

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
