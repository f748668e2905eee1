// mmq.cu: quantized matrix products for prefill and batched decode on the tensor cores.
// dst[i, r] = dot(w[r, :], xq[i, :]) as in matmul.cu, for Q4_K, Q6_K and Q8_0 weights:
// the int8 sub-block sums come from mma.sync (exact int32, as the reference's integer
// sums), then each block's float formula is that of quant.Dot.
//
// A block of 256 threads (8 warps, 4 x 2) computes a tile of 128 weight rows x 64
// activation rows, 256 elements of K (one super-block) a step: the weight quants are
// unpacked to int8 in shared memory with their scales, the activation quants copied, and
// each warp multiplies a 32 x 32 sub-tile from fragments loaded with ldmatrix. The global
// loads of step s+1 are issued into registers before step s is computed, so their latency
// hides behind the tensor-core work. K must be a multiple of 256.
//
// Grid: (ceil(M / 128), ceil(n / 64) * splits). With splits > 1 the steps are divided
// among the y blocks of a tile, which write partial sums part[split][n][M] that
// mmq_reduce adds in split order (deterministic); with one split they write dst.
// Dynamic shared memory: sizeof(MqSmem).
#include "common.cuh"

#define MQ_TM 128  // weight rows a block
#define MQ_TN 64   // activation rows a block
#define MQ_LD 272  // padded shared row of 256 int8: conflict-free ldmatrix rows
#define MQ_NT 256  // threads
#ifndef MQ_MINB
#define MQ_MINB 2  // blocks an SM holds: at most 128 registers a thread
#endif

struct MqSmem {
    int8_t w[MQ_TM][MQ_LD];
    int8_t x[MQ_TN][MQ_LD];
    float wd[MQ_TM][8];     // Q4_K: d, dmin; Q6_K: d; Q8_0: the 8 block scales
    float xd[MQ_TN][8];     // Q8_K: d; Q8_0: the 8 block scales
    int8_t wsc[MQ_TM][16];  // sub-block scales: Q4_K 8 (0..63), Q6_K 16
    uint32_t wm[MQ_TM][2];  // Q4_K: the 8 mins, a byte each
    uint32_t xbs[MQ_TN][4]; // Q8_K: the sums of the 8 32-element sub-blocks, int16 pairs
};

__device__ __forceinline__ void mma_k32(int* c, const uint32_t* a, uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ void mma_k16(int* c, uint32_t a0, uint32_t a1, uint32_t b0) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
                 : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
                 : "r"(a0), "r"(a1), "r"(b0));
}

// ldsm_x4 loads four 8x8 matrices of 16-bit elements (here 8 rows x 16 int8) from shared
// memory: lanes 8j..8j+7 give the row addresses of matrix j.
__device__ __forceinline__ void ldsm_x4(uint32_t* r, const void* p) {
    const uint32_t a = (uint32_t)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
}

// MqLoad is one thread's share of a step's global data, held in registers between the
// load and the store to shared memory.
struct MqLoad {
    uint4 w[8];   // weight quants
    uint4 wh;     // Q4_K header (d, dmin, scales); Q6_K scales; Q8_0 the 8 f16 scales
    uint32_t wd;  // Q6_K: d (f16)
    uint4 x[4];   // activation quants
    uint4 xs;     // Q8_K: 4 bsums; Q8_0: 4 block scales
    float xd;     // Q8_K: d
};

// Thread t loads weight row t/2 (half t&1 of its step) and activation row t/4 (quarter
// t&3).
template <int T>
__device__ __forceinline__ void mq_load(MqLoad& L, const uint8_t* W, i64 wstride, int M, const uint8_t* X,
                                        i64 xstride, int N, int K, int row0, int col0, int step) {
    const int t = threadIdx.x, part = t & 1;
    const int r = row0 + (t >> 1);
    if (r < M) {
        const int nb = K / 256;
        const uint8_t* wr = W + (i64)r * wstride;
        if (T == T_Q4_K) {
            const uint8_t* b = wr + 144 * step;
#pragma unroll
            for (int u = 0; u < 4; u++) L.w[u] = *(const uint4*)(b + 16 + 64 * part + 16 * u);
            if (part == 0) L.wh = *(const uint4*)b;
        } else if (T == T_Q6_K) {
            const uint8_t* ql = wr + 128 * step + 64 * part;
            const uint8_t* qh = wr + 128 * nb + 64 * step + 32 * part;
#pragma unroll
            for (int u = 0; u < 4; u++) L.w[u] = *(const uint4*)(ql + 16 * u);
            L.w[4] = *(const uint4*)qh;
            L.w[5] = *(const uint4*)(qh + 16);
            if (part == 0)
                L.wh = *(const uint4*)(wr + 192 * nb + 16 * step);
            else
                L.wd = *(const uint16_t*)(wr + 208 * nb + 2 * step);
        } else {
            const uint8_t* q = wr + 256 * step + 128 * part;
#pragma unroll
            for (int u = 0; u < 8; u++) L.w[u] = *(const uint4*)(q + 16 * u);
            if (part == 0) L.wh = *(const uint4*)(wr + K + 16 * step);
        }
    }
    const int c = col0 + (t >> 2), q4 = t & 3;
    if (c < N) {
        const uint8_t* xr = X + (i64)c * xstride;
        const uint8_t* q = xr + 256 * step + 64 * q4;
#pragma unroll
        for (int u = 0; u < 4; u++) L.x[u] = *(const uint4*)(q + 16 * u);
        if (T == T_Q8_0) {
            if (q4 < 2) L.xs = *(const uint4*)(xr + K + 32 * step + 16 * q4);
        } else {
            if (T == T_Q4_K) L.xs = *(const uint4*)((const int*)(xr + Q8K_BSUMS(K)) + 16 * step + 4 * q4);
            if (q4 == 0) L.xd = ((const float*)(xr + K))[step];
        }
    }
}

template <int T>
__device__ __forceinline__ void mq_store(MqSmem& sm, const MqLoad& L, int M, int N, int row0, int col0) {
    const int t = threadIdx.x, part = t & 1, row = t >> 1;
    uint32_t* dst = (uint32_t*)&sm.w[row][0];
    if (row0 + row >= M) {
#pragma unroll
        for (int i = 0; i < 32; i++) dst[32 * part + i] = 0;
        if (part == 0) {
#pragma unroll
            for (int j = 0; j < 8; j++) sm.wd[row][j] = 0;
            *(uint4*)&sm.wsc[row][0] = make_uint4(0, 0, 0, 0);
            sm.wm[row][0] = sm.wm[row][1] = 0;
        }
    } else if (T == T_Q4_K) {
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int o = 64 * part + 16 * u;  // byte of qs
            const int c = o / 32, l0 = o % 32;
            const uint32_t qw[4] = {L.w[u].x, L.w[u].y, L.w[u].z, L.w[u].w};
#pragma unroll
            for (int v = 0; v < 4; v++) {
                dst[(64 * c + l0 + 4 * v) / 4] = qw[v] & 0x0f0f0f0f;
                dst[(64 * c + 32 + l0 + 4 * v) / 4] = (qw[v] >> 4) & 0x0f0f0f0f;
            }
        }
        if (part == 0) {
            // getScaleMinK4 of the 12 scale bytes q[0..11] (words y, z, w of the header).
            const uint32_t s0 = L.wh.y, s1 = L.wh.z, s2 = L.wh.w;
            const uint32_t sc_lo = s0 & 0x3f3f3f3f, m_lo = s1 & 0x3f3f3f3f;
            const uint32_t sc_hi = (s2 & 0x0f0f0f0f) | (((s0 >> 6) & 0x03030303) << 4);
            const uint32_t m_hi = ((s2 >> 4) & 0x0f0f0f0f) | (((s1 >> 6) & 0x03030303) << 4);
            *(uint2*)&sm.wsc[row][0] = make_uint2(sc_lo, sc_hi);
            sm.wm[row][0] = m_lo;
            sm.wm[row][1] = m_hi;
            sm.wd[row][0] = h2f(L.wh.x & 0xffff);
            sm.wd[row][1] = h2f(L.wh.x >> 16);
        }
    } else if (T == T_Q6_K) {
        const int h = part;
        const uint32_t Lw[16] = {L.w[0].x, L.w[0].y, L.w[0].z, L.w[0].w, L.w[1].x, L.w[1].y, L.w[1].z, L.w[1].w,
                                 L.w[2].x, L.w[2].y, L.w[2].z, L.w[2].w, L.w[3].x, L.w[3].y, L.w[3].z, L.w[3].w};
        const uint32_t Hw[8] = {L.w[4].x, L.w[4].y, L.w[4].z, L.w[4].w, L.w[5].x, L.w[5].y, L.w[5].z, L.w[5].w};
#pragma unroll
        for (int j = 0; j < 8; j++) {  // l = 4j
            const uint32_t A = Lw[j], B = Lw[8 + j], Q = Hw[j];
            dst[(128 * h + 4 * j) / 4] = __vsub4((A & 0x0f0f0f0f) | ((Q & 0x03030303) << 4), 0x20202020);
            dst[(128 * h + 32 + 4 * j) / 4] = __vsub4((B & 0x0f0f0f0f) | (((Q >> 2) & 0x03030303) << 4), 0x20202020);
            dst[(128 * h + 64 + 4 * j) / 4] = __vsub4(((A >> 4) & 0x0f0f0f0f) | (((Q >> 4) & 0x03030303) << 4), 0x20202020);
            dst[(128 * h + 96 + 4 * j) / 4] = __vsub4(((B >> 4) & 0x0f0f0f0f) | (((Q >> 6) & 0x03030303) << 4), 0x20202020);
        }
        if (part == 0)
            *(uint4*)&sm.wsc[row][0] = L.wh;
        else
            sm.wd[row][0] = h2f((uint16_t)L.wd);
    } else {
#pragma unroll
        for (int u = 0; u < 8; u++) *(uint4*)&dst[32 * part + 4 * u] = L.w[u];
        if (part == 0) {
            const uint32_t hw[4] = {L.wh.x, L.wh.y, L.wh.z, L.wh.w};
#pragma unroll
            for (int j = 0; j < 4; j++) {
                sm.wd[row][2 * j] = h2f(hw[j] & 0xffff);
                sm.wd[row][2 * j + 1] = h2f(hw[j] >> 16);
            }
        }
    }

    const int col = t >> 2, q4 = t & 3;
    uint4* xdst = (uint4*)&sm.x[col][64 * q4];
    if (col0 + col >= N) {
#pragma unroll
        for (int u = 0; u < 4; u++) xdst[u] = make_uint4(0, 0, 0, 0);
        if (q4 == 0) {
#pragma unroll
            for (int j = 0; j < 8; j++) sm.xd[col][j] = 0;
            *(uint4*)&sm.xbs[col][0] = make_uint4(0, 0, 0, 0);
        }
        return;
    }
#pragma unroll
    for (int u = 0; u < 4; u++) xdst[u] = L.x[u];
    if (T == T_Q8_0) {
        if (q4 < 2) *(uint4*)&sm.xd[col][4 * q4] = L.xs;
    } else {
        if (T == T_Q4_K) {
            // sub-blocks 2*q4 and 2*q4+1 from bsums 4*q4 .. 4*q4+3
            const int a = (int)L.xs.x + (int)L.xs.y, b = (int)L.xs.z + (int)L.xs.w;
            sm.xbs[col][q4] = ((uint32_t)a & 0xffff) | ((uint32_t)b << 16);
        }
        if (q4 == 0) sm.xd[col][0] = L.xd;
    }
}

// sc8 is signed byte k of w.
__device__ __forceinline__ int sc8(uint32_t w, int k) { return (int)(int8_t)(uint8_t)(w >> (8 * k)); }

template <int T>
__device__ void mmq(const uint8_t* W, i64 wstride, const uint8_t* X, i64 xstride, float* D, i64 dstride, int M,
                    int K, int N, float* part, int ntile) {
    extern __shared__ __align__(16) uint8_t mq_raw[];
    MqSmem& sm = *reinterpret_cast<MqSmem*>(mq_raw);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, tig = lane & 3;
    const int wm0 = (warp & 3) * 32, wn0 = (warp >> 2) * 32;
    const int row0 = blockIdx.x * MQ_TM;
    const int split = blockIdx.y / ntile, nsplit = gridDim.y / ntile;
    const int col0 = (blockIdx.y % ntile) * MQ_TN;
    const int nsteps = K / 256, per = (nsteps + nsplit - 1) / nsplit;
    const int s0 = split * per, s1 = min(nsteps, s0 + per);

    float acc[2][4][4];
#pragma unroll
    for (int a = 0; a < 2; a++)
#pragma unroll
        for (int b = 0; b < 4; b++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[a][b][e] = 0;

    MqLoad L;
    if (s0 < s1) mq_load<T>(L, W, wstride, M, X, xstride, N, K, row0, col0, s0);
    for (int step = s0; step < s1; step++) {
        __syncthreads();  // the last step's fragments are read
        mq_store<T>(sm, L, M, N, row0, col0);
        __syncthreads();
        if (step + 1 < s1) mq_load<T>(L, W, wstride, M, X, xstride, N, K, row0, col0, step + 1);

        // The scales of this lane's four weight rows (mi, e >> 1).
        uint4 scw[2][2];
#pragma unroll
        for (int mi = 0; mi < 2; mi++)
#pragma unroll
            for (int h = 0; h < 2; h++) scw[mi][h] = *(const uint4*)&sm.wsc[wm0 + 16 * mi + g + 8 * h][0];
        int isum[2][4][4];
#pragma unroll
        for (int a = 0; a < 2; a++)
#pragma unroll
            for (int b = 0; b < 4; b++)
#pragma unroll
                for (int e = 0; e < 4; e++) isum[a][b][e] = 0;

#pragma unroll 2
        for (int c = 0; c < 8; c++) {  // 32 elements of K
            uint32_t A[2][4], B[4][2];
#pragma unroll
            for (int mi = 0; mi < 2; mi++) ldsm_x4(A[mi], &sm.w[wm0 + 16 * mi + (lane & 15)][32 * c + 16 * (lane >> 4)]);
#pragma unroll
            for (int nj = 0; nj < 2; nj++) {
                uint32_t r[4];
                ldsm_x4(r, &sm.x[wn0 + 16 * nj + (lane & 7) + 8 * (lane >> 4)][32 * c + 16 * ((lane >> 3) & 1)]);
                B[2 * nj][0] = r[0];
                B[2 * nj][1] = r[1];
                B[2 * nj + 1][0] = r[2];
                B[2 * nj + 1][1] = r[3];
            }
#pragma unroll
            for (int mi = 0; mi < 2; mi++) {
#pragma unroll
                for (int ni = 0; ni < 4; ni++) {
                    if (T == T_Q6_K) {
                        int C0[4] = {0, 0, 0, 0}, C1[4] = {0, 0, 0, 0};
                        mma_k16(C0, A[mi][0], A[mi][1], B[ni][0]);
                        mma_k16(C1, A[mi][2], A[mi][3], B[ni][1]);
#pragma unroll
                        for (int e = 0; e < 4; e++) {
                            const uint4 s = scw[mi][e >> 1];
                            const uint32_t sw = (2 * c) < 4 ? s.x : (2 * c) < 8 ? s.y : (2 * c) < 12 ? s.z : s.w;
                            isum[mi][ni][e] += sc8(sw, (2 * c) & 3) * C0[e] + sc8(sw, (2 * c + 1) & 3) * C1[e];
                        }
                    } else {
                        int C[4] = {0, 0, 0, 0};
                        mma_k32(C, A[mi], B[ni][0], B[ni][1]);
#pragma unroll
                        for (int e = 0; e < 4; e++) {
                            if (T == T_Q8_0) {
                                const int row = wm0 + 16 * mi + g + 8 * (e >> 1);
                                const int col = wn0 + 8 * ni + 2 * tig + (e & 1);
                                acc[mi][ni][e] += (float)C[e] * (sm.wd[row][c] * sm.xd[col][c]);
                            } else {
                                const uint4 s = scw[mi][e >> 1];
                                const uint32_t sw = c < 4 ? s.x : s.y;
                                isum[mi][ni][e] += sc8(sw, c & 3) * C[e];
                            }
                        }
                    }
                }
            }
        }
        if (T != T_Q8_0) {
#pragma unroll
            for (int mi = 0; mi < 2; mi++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const int row = wm0 + 16 * mi + g + 8 * h;
                    const float d = sm.wd[row][0], dmin = sm.wd[row][1];
                    const uint32_t m0 = sm.wm[row][0], m1 = sm.wm[row][1];
#pragma unroll
                    for (int ni = 0; ni < 4; ni++)
#pragma unroll
                        for (int o = 0; o < 2; o++) {
                            const int col = wn0 + 8 * ni + 2 * tig + o;
                            const int e = 2 * h + o;
                            const float yd = sm.xd[col][0];
                            if (T == T_Q4_K) {
                                const uint4 bs = *(const uint4*)&sm.xbs[col][0];
                                int mins = __dp2a_lo((int)bs.x, (int)m0, 0);
                                mins = __dp2a_hi((int)bs.y, (int)m0, mins);
                                mins = __dp2a_lo((int)bs.z, (int)m1, mins);
                                mins = __dp2a_hi((int)bs.w, (int)m1, mins);
                                acc[mi][ni][e] += d * yd * (float)isum[mi][ni][e] - dmin * yd * (float)mins;
                            } else {
                                acc[mi][ni][e] += d * yd * (float)isum[mi][ni][e];
                            }
                        }
                }
        }
    }
    float* out = D;
    i64 ostride = dstride;
    if (nsplit > 1) {
        out = part + (i64)split * N * M;
        ostride = M;
    }
#pragma unroll
    for (int mi = 0; mi < 2; mi++)
#pragma unroll
        for (int ni = 0; ni < 4; ni++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int r = row0 + wm0 + 16 * mi + g + 8 * (e >> 1);
                const int c = col0 + wn0 + 8 * ni + 2 * tig + (e & 1);
                if (r < M && c < N) out[(i64)c * ostride + r] = acc[mi][ni][e];
            }
}

#define MMQ(NAME, T)                                                                                              \
    extern "C" __global__ void __launch_bounds__(MQ_NT, MQ_MINB) mmq_##NAME(const uint8_t* W, i64 wstride, const uint8_t* X, \
                                                                   i64 xstride, float* D, i64 dstride, int M, int K, \
                                                                   int N, float* part, int ntile) {              \
        mmq<T>(W, wstride, X, xstride, D, dstride, M, K, N, part, ntile);                                         \
    }
MMQ(q4_k, T_Q4_K)
MMQ(q6_k, T_Q6_K)
MMQ(q8_0, T_Q8_0)

// mmq_reduce: dst[c, r] = sum over s of part[s][c][r], s in order.
extern "C" __global__ void mmq_reduce(float* D, i64 dstride, const float* part, int M, int N, int splits) {
    const i64 n = (i64)M * N;
    for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n; i += (i64)gridDim.x * blockDim.x) {
        float s = part[i];
        for (int z = 1; z < splits; z++) s += part[(i64)z * n + i];
        D[(i / M) * dstride + i % M] = s;
    }
}
