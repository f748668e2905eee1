// mmq.cu: quantized matrix products for prefill and batched decode on the tensor cores.
// dst[i, r] = dot(w[r, :], xq[i, :]) as in matmul.cu, for Q4_K, Q6_K and Q8_0 weights:
// the int8 sub-block sums come from mma.sync (exact int32, as the reference's integer
// sums), then each block's float formula is that of quant.Dot.
//
// A block of 128 threads computes a tile of 64 weight rows x 64 activation rows, 256
// elements of K at a time: the weight quants are unpacked to int8 in shared memory, the
// activation quants copied, and each warp multiplies a 32 x 32 sub-tile.
// Grid: (ceil(M / 64), ceil(n / 64)). K must be a multiple of 256.
#include "common.cuh"

#define MQ 64    // tile rows and columns
#define MQ_LD 272 // padded shared row of 256 int8 (conflict-free fragment loads)

__device__ __forceinline__ void mma_k32(int* c, int a0, int a1, int a2, int a3, int b0, int b1) {
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

__device__ __forceinline__ void mma_k16(int* c, int a0, int a1, int b0) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
                 : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
                 : "r"(a0), "r"(a1), "r"(b0));
}

struct MqSmem {
    int8_t w[MQ][MQ_LD];
    int8_t x[MQ][MQ_LD];
    int wsc[MQ][17];   // sub-block scales (Q4_K 8, Q6_K 16)
    int wm[MQ][9];     // Q4_K mins
    float wd[MQ][9];   // Q4_K/Q6_K: [0] d, [1] dmin; Q8_0: the 8 block scales
    float xd[MQ][9];   // Q8_K: [0] d; Q8_0: the 8 block scales
    int xbs[MQ][9];    // Q8_K: bsums of each 32-element sub-block
};

template <int T>
__device__ __forceinline__ void mq_load_w(MqSmem& sm, const uint8_t* W, i64 wstride, int M, int K, int row0, int step) {
    const int t = threadIdx.x, row = t >> 1, part = t & 1;
    const int r = row0 + row;
    int* dst = (int*)&sm.w[row][0];
    if (r >= M) {
        for (int i = part * 32; i < part * 32 + 32; i++) dst[i] = 0;
        if (part == 0) {
            for (int j = 0; j < 16; j++) sm.wsc[row][j] = 0;
            for (int j = 0; j < 8; j++) { sm.wm[row][j] = 0; sm.wd[row][j] = 0; }
        }
        return;
    }
    const int nb = K / 256;
    const uint8_t* wr = W + (i64)r * wstride;
    if (T == T_Q4_K) {
        const uint8_t* b = wr + 144 * step;
#pragma unroll
        for (int u = 0; u < 4; u++) {
            int o = 64 * part + 16 * u;  // byte of qs
            uint4 q = *(const uint4*)(b + 16 + o);
            int c = o / 32, l0 = o % 32;
            uint32_t qw[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
            for (int v = 0; v < 4; v++) {
                dst[(64 * c + l0 + 4 * v) / 4] = qw[v] & 0x0f0f0f0f;
                dst[(64 * c + 32 + l0 + 4 * v) / 4] = (qw[v] >> 4) & 0x0f0f0f0f;
            }
        }
        if (part == 0) {
            for (int j = 0; j < 8; j++) scale_min_k4(j, b + 4, &sm.wsc[row][j], &sm.wm[row][j]);
            sm.wd[row][0] = ldh(b);
            sm.wd[row][1] = ldh(b + 2);
        }
    } else if (T == T_Q6_K) {
        const int h = part;
        const uint8_t* ql = wr + 128 * step + 64 * h;
        const uint8_t* qh = wr + 128 * nb + 64 * step + 32 * h;
        uint32_t L[16], H[8];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            uint4 q = *(const uint4*)(ql + 16 * u);
            L[4 * u] = q.x; L[4 * u + 1] = q.y; L[4 * u + 2] = q.z; L[4 * u + 3] = q.w;
        }
#pragma unroll
        for (int u = 0; u < 2; u++) {
            uint4 q = *(const uint4*)(qh + 16 * u);
            H[4 * u] = q.x; H[4 * u + 1] = q.y; H[4 * u + 2] = q.z; H[4 * u + 3] = q.w;
        }
#pragma unroll
        for (int j = 0; j < 8; j++) {  // l = 4j
            uint32_t A = L[j], B = L[8 + j], Q = H[j];
            dst[(128 * h + 4 * j) / 4] = __vsub4((A & 0x0f0f0f0f) | ((Q & 0x03030303) << 4), 0x20202020);
            dst[(128 * h + 32 + 4 * j) / 4] = __vsub4((B & 0x0f0f0f0f) | (((Q >> 2) & 0x03030303) << 4), 0x20202020);
            dst[(128 * h + 64 + 4 * j) / 4] = __vsub4(((A >> 4) & 0x0f0f0f0f) | (((Q >> 4) & 0x03030303) << 4), 0x20202020);
            dst[(128 * h + 96 + 4 * j) / 4] = __vsub4(((B >> 4) & 0x0f0f0f0f) | (((Q >> 6) & 0x03030303) << 4), 0x20202020);
        }
        if (part == 0) {
            const int8_t* sc = (const int8_t*)(wr + 192 * nb + 16 * step);
            for (int j = 0; j < 16; j++) sm.wsc[row][j] = sc[j];
            sm.wd[row][0] = ldh(wr + 208 * nb + 2 * step);
        }
    } else {  // Q8_0, repacked: 8 blocks of 32 per step
        const uint8_t* q = wr + 256 * step + 128 * part;
#pragma unroll
        for (int u = 0; u < 8; u++) {
            uint4 v = *(const uint4*)(q + 16 * u);
            dst[32 * part + 4 * u] = v.x; dst[32 * part + 4 * u + 1] = v.y;
            dst[32 * part + 4 * u + 2] = v.z; dst[32 * part + 4 * u + 3] = v.w;
        }
        if (part == 0)
            for (int j = 0; j < 8; j++) sm.wd[row][j] = ldh(wr + K + 2 * (8 * step + j));  // d after the K quants
    }
}

template <int T>
__device__ __forceinline__ void mq_load_x(MqSmem& sm, const uint8_t* X, i64 xstride, int N, int K, int col0, int step) {
    const int t = threadIdx.x, col = t >> 1, part = t & 1;
    const int c = col0 + col;
    int* dst = (int*)&sm.x[col][0];
    if (c >= N) {
        for (int i = part * 32; i < part * 32 + 32; i++) dst[i] = 0;
        if (part == 0)
            for (int j = 0; j < 8; j++) { sm.xd[col][j] = 0; sm.xbs[col][j] = 0; }
        return;
    }
    const uint8_t* xr = X + (i64)c * xstride;
    const uint8_t* q = xr + 256 * step + 128 * part;
#pragma unroll
    for (int u = 0; u < 8; u++) {
        uint4 v = *(const uint4*)(q + 16 * u);
        dst[32 * part + 4 * u] = v.x; dst[32 * part + 4 * u + 1] = v.y;
        dst[32 * part + 4 * u + 2] = v.z; dst[32 * part + 4 * u + 3] = v.w;
    }
    if (part == 0) {
        const float* d = (const float*)(xr + K);
        if (T == T_Q8_0) {
            for (int j = 0; j < 8; j++) sm.xd[col][j] = d[8 * step + j];
        } else {
            sm.xd[col][0] = d[step];
            const int* bs = (const int*)(xr + Q8K_BSUMS(K)) + 16 * step;
            for (int j = 0; j < 8; j++) sm.xbs[col][j] = bs[2 * j] + bs[2 * j + 1];
        }
    }
}

template <int T>
__device__ void mmq(const uint8_t* W, i64 wstride, const uint8_t* X, i64 xstride, float* D, i64 dstride, int M, int K, int N) {
    __shared__ MqSmem sm;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, tig = lane & 3;
    const int wr0 = (warp & 1) * 32, wc0 = (warp >> 1) * 32;
    const int row0 = blockIdx.x * MQ, col0 = blockIdx.y * MQ;
    float acc[2][4][4];
#pragma unroll
    for (int a = 0; a < 2; a++)
#pragma unroll
        for (int b = 0; b < 4; b++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[a][b][e] = 0;

    for (int step = 0; step < K / 256; step++) {
        __syncthreads();
        mq_load_w<T>(sm, W, wstride, M, K, row0, step);
        mq_load_x<T>(sm, X, xstride, N, K, col0, step);
        __syncthreads();
        int isum[2][4][4];
#pragma unroll
        for (int a = 0; a < 2; a++)
#pragma unroll
            for (int b = 0; b < 4; b++)
#pragma unroll
                for (int e = 0; e < 4; e++) isum[a][b][e] = 0;
        const int nsub = T == T_Q6_K ? 16 : 8;
#pragma unroll
        for (int s = 0; s < nsub; s++) {
            const int kk = (T == T_Q6_K ? 16 : 32) * s;
            int A[2][4], B[4][2];
#pragma unroll
            for (int mi = 0; mi < 2; mi++) {
                const int ra = wr0 + 16 * mi + g;
                A[mi][0] = *(const int*)&sm.w[ra][kk + 4 * tig];
                A[mi][1] = *(const int*)&sm.w[ra + 8][kk + 4 * tig];
                if (T != T_Q6_K) {
                    A[mi][2] = *(const int*)&sm.w[ra][kk + 16 + 4 * tig];
                    A[mi][3] = *(const int*)&sm.w[ra + 8][kk + 16 + 4 * tig];
                }
            }
#pragma unroll
            for (int ni = 0; ni < 4; ni++) {
                const int cb = wc0 + 8 * ni + g;
                B[ni][0] = *(const int*)&sm.x[cb][kk + 4 * tig];
                if (T != T_Q6_K) B[ni][1] = *(const int*)&sm.x[cb][kk + 16 + 4 * tig];
            }
#pragma unroll
            for (int mi = 0; mi < 2; mi++) {
#pragma unroll
                for (int ni = 0; ni < 4; ni++) {
                    int C[4] = {0, 0, 0, 0};
                    if (T == T_Q6_K)
                        mma_k16(C, A[mi][0], A[mi][1], B[ni][0]);
                    else
                        mma_k32(C, A[mi][0], A[mi][1], A[mi][2], A[mi][3], B[ni][0], B[ni][1]);
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        const int row = wr0 + 16 * mi + g + (e >= 2 ? 8 : 0);
                        if (T == T_Q8_0) {
                            const int col = wc0 + 8 * ni + 2 * tig + (e & 1);
                            acc[mi][ni][e] += (float)C[e] * (sm.wd[row][s] * sm.xd[col][s]);
                        } else {
                            isum[mi][ni][e] += sm.wsc[row][s] * C[e];
                        }
                    }
                }
            }
        }
        if (T != T_Q8_0) {
#pragma unroll
            for (int mi = 0; mi < 2; mi++)
#pragma unroll
                for (int ni = 0; ni < 4; ni++)
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        const int row = wr0 + 16 * mi + g + (e >= 2 ? 8 : 0);
                        const int col = wc0 + 8 * ni + 2 * tig + (e & 1);
                        const float yd = sm.xd[col][0];
                        if (T == T_Q4_K) {
                            int mins = 0;
#pragma unroll
                            for (int j = 0; j < 8; j++) mins += sm.wm[row][j] * sm.xbs[col][j];
                            acc[mi][ni][e] += sm.wd[row][0] * yd * (float)isum[mi][ni][e] - sm.wd[row][1] * yd * (float)mins;
                        } else {
                            acc[mi][ni][e] += sm.wd[row][0] * yd * (float)isum[mi][ni][e];
                        }
                    }
        }
    }
#pragma unroll
    for (int mi = 0; mi < 2; mi++)
#pragma unroll
        for (int ni = 0; ni < 4; ni++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int r = row0 + wr0 + 16 * mi + g + (e >= 2 ? 8 : 0);
                const int c = col0 + wc0 + 8 * ni + 2 * tig + (e & 1);
                if (r < M && c < N) D[(i64)c * dstride + r] = acc[mi][ni][e];
            }
}

#define MMQ(NAME, T)                                                                                       \
    extern "C" __global__ void __launch_bounds__(128) mmq_##NAME(const uint8_t* W, i64 wstride, const uint8_t* X, \
                                                                 i64 xstride, float* D, i64 dstride, int M, int K, int N) { \
        mmq<T>(W, wstride, X, xstride, D, dstride, M, K, N);                                               \
    }
MMQ(q4_k, T_Q4_K)
MMQ(q6_k, T_Q6_K)
MMQ(q8_0, T_Q8_0)
