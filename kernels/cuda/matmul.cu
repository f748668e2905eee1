// matmul.cu: dst[i, r] = dot(w[r, :], xq[i, :]) with xq the activation rows already
// quantized to w's dot partner (common.cuh layouts). Integer sums are exact and each
// block's float formula is the one of quant.Dot; only the order of the float sum over
// blocks differs from the reference.
//
// Grid: (ceil(M / rows per block), ceil(n / NX)); 128 threads, one warp per weight row
// (two for Q4_K), NX activation rows per warp so that each weight byte is read once per
// NX rows. Batch 1 (NX = 1) of Q4_K, Q6_K and Q8_0 has its own kernels (mv1, below).
#include "common.cuh"

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

template <int T, int NX>
__device__ void mmv_generic(MMV_ARGS, int rb) {
    int lane = threadIdx.x & 31;
    int r = rb * 4 + (threadIdx.x >> 5);
    if (r >= M) return;
    int x0 = blockIdx.y * NX, ncol = min(NX, nx - x0);
    const uint8_t* wr = W + (i64)r * wstride;
    if (T == T_F32 || T == T_F16 || T == T_BF16) {
        // Each lane sums its elements j, j+32, ... in order (in double: a router's logits,
        // whose near-ties pick experts); MV_FU of them are loaded at once, so that the
        // loads of a row are not one dependent round trip each.
        constexpr int MV_FU = 8;
        auto ld = [&](const uint8_t* row, int j) {
            return T == T_F32 ? ((const float*)row)[j] : T == T_F16 ? h2f(((const uint16_t*)row)[j]) : bf2f(((const uint16_t*)row)[j]);
        };
        double acc[NX];
#pragma unroll
        for (int n = 0; n < NX; n++) acc[n] = 0;
        int j = lane;
        for (; j + 32 * (MV_FU - 1) < K; j += 32 * MV_FU) {
            float wv[MV_FU], xv[MV_FU][NX];
#pragma unroll
            for (int u = 0; u < MV_FU; u++) {
                wv[u] = ld(wr, j + 32 * u);
#pragma unroll
                for (int n = 0; n < NX; n++) xv[u][n] = n < ncol ? ld(X + (i64)(x0 + n) * xstride, j + 32 * u) : 0.f;
            }
#pragma unroll
            for (int u = 0; u < MV_FU; u++)
#pragma unroll
                for (int n = 0; n < NX; n++)
                    if (n < ncol) acc[n] += (double)(wv[u] * xv[u][n]);
        }
        for (; j < K; j += 32) {
            const float wv = ld(wr, j);
#pragma unroll
            for (int n = 0; n < NX; n++)
                if (n < ncol) acc[n] += (double)(wv * ld(X + (i64)(x0 + n) * xstride, j));
        }
#pragma unroll
        for (int n = 0; n < NX; n++) {
            double s = warp_sumd(acc[n]);
            if (lane == 0 && n < ncol) D[(i64)(x0 + n) * dstride + r] = (float)s;
        }
        return;
    }
    const int nb = K / (T == T_Q2_K || T == T_Q3_K || T == T_Q5_K ? 256 : 32);
    float acc[NX];
#pragma unroll
    for (int n = 0; n < NX; n++) acc[n] = 0;
    for (int ib = lane; ib < nb; ib += 32) {
#pragma unroll
        for (int n = 0; n < NX; n++)
            if (n < ncol) acc[n] += block_dot<T>(wr, ib, X + (i64)(x0 + n) * xstride, K);
    }
#pragma unroll
    for (int n = 0; n < NX; n++) {
        float s = warp_sum(acc[n]);
        if (lane == 0 && n < ncol) D[(i64)(x0 + n) * dstride + r] = s;
    }
}

// ---- Q4_K: 8 lanes per 144-byte block, each one 16-byte load of quants ----

// q4k_pair: the scales and mins of sub-blocks 2c and 2c+1 (getScaleMinK4) from the 12
// scale bytes in three words, two bytes at a time.
__device__ __forceinline__ void q4k_pair(int c, uint32_t s0, uint32_t s1, uint32_t s2, int* sc0, int* sc1, int* m0, int* m1) {
    uint32_t sc, m;
    if (c < 2) {
        const int sh = 16 * c;
        sc = (s0 >> sh) & 0x3f3f;
        m = (s1 >> sh) & 0x3f3f;
    } else {
        const int sh = 16 * (c - 2);
        const uint32_t a = s2 >> sh, lo = s0 >> sh, hi = s1 >> sh;
        sc = (a & 0x0f0f) | (((lo >> 6) & 0x0303) << 4);
        m = ((a >> 4) & 0x0f0f) | (((hi >> 6) & 0x0303) << 4);
    }
    *sc0 = sc & 0xff;
    *sc1 = (sc >> 8) & 0xff;
    *m0 = m & 0xff;
    *m1 = (m >> 8) & 0xff;
}

// q4k_dot: the integer sums of lane chunk c (0..3) of a block, which holds qs bytes
// [32c, 32c+32) in qa, qb: the quants of sub-blocks 2c (low nibbles, sum returned) and
// 2c+1 (high nibbles, sum in *sb), against the activation quants xs.
__device__ __forceinline__ int q4k_dot(const uint4 qa, const uint4 qb, const int* xs, int* sb) {
    const uint32_t w[8] = {qa.x, qa.y, qa.z, qa.w, qb.x, qb.y, qb.z, qb.w};
    int sa = 0, s2 = 0;
#pragma unroll
    for (int k = 0; k < 8; k++) {
        sa = __dp4a((int)(w[k] & 0x0f0f0f0f), xs[k], sa);
        s2 = __dp4a((int)((w[k] >> 4) & 0x0f0f0f0f), xs[8 + k], s2);
    }
    *sb = s2;
    return sa;
}

// q4k_part is the block's float formula of quant.Dot for the chunk's sums.
__device__ __forceinline__ float q4k_part(uint4 hdr, int c, int sa, int sb, float yd, int4 bs) {
    const float d = h2f(hdr.x & 0xffff), dmin = h2f(hdr.x >> 16);
    int sc0, m0, sc1, m1;
    q4k_pair(c, hdr.y, hdr.z, hdr.w, &sc0, &sc1, &m0, &m1);
    const int mins = m0 * (bs.x + bs.y) + m1 * (bs.z + bs.w);
    return d * yd * (float)(sc0 * sa + sc1 * sb) - dmin * yd * (float)mins;
}

// Two weight rows per warp (Q4K_ROWS), four warps per block: 8 rows a block; each
// activation load serves both rows.
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

// ---- batch-1 products of Q4_K, Q6_K and Q8_0 (mmv_*_1, mmv_id_*, mmv_multi) ----
//
// The activation row is copied once per block into shared memory (cp.async, when the
// launch gives it the row's bytes of dynamic shared memory; else it is read from global
// memory), so that the global loads are weights only, and each warp takes several
// weight rows against each activation load: Q4_K 4, Q6_K 2, Q8_0 4 rows a warp, four
// warps a block (mv1_rows, rowsPerBlock in matmul.go). Each warp loads the weights of
// its next blocks before it computes the current ones. The lanes take blocks as the
// NX > 1 kernels do, so the integer sums and the per-lane float formulas are theirs.
//
// Bank conflicts: a Q4_K lane reads 64 bytes of quants at 256ib + 64c and a Q6_K lane
// 16 bytes at 256ib + 128h + 16g + 32s, 16 bytes at a time; in shared memory the 16-byte
// chunk q of the quants is stored at q ^ (((q >> 3) & 3) << sh) (sh 0 for Q4_K, 1 for
// Q6_K), which spreads the eight lanes of each quarter warp over all 32 banks.

#define Q4K_R1 4
#define Q6K_R1 2
#define Q80_R1 4

// mv1_rows is the weight rows a block of the batch-1 kernel of type T takes.
__device__ __forceinline__ int mv1_rows(int T) { return 4 * (T == T_Q4_K ? Q4K_R1 : T == T_Q6_K ? Q6K_R1 : Q80_R1); }

// mv1_bytes is the bytes of a quantized activation row of K elements for T's kernel.
__device__ __forceinline__ int mv1_bytes(int T, int K) {
    return ((T == T_Q8_0 ? K + 4 * (K / 32) : Q8K_BSUMS(K) + 4 * (K / 16)) + 15) & ~15;
}

__device__ __forceinline__ unsigned dyn_smem_size() {
    unsigned n;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(n));
    return n;
}

__device__ __forceinline__ int mv1_swz(int q, int sh) { return q ^ (((q >> 3) & 3) << sh); }

// mv1_stage starts the copies of activation row X (n bytes) into shared memory xs,
// quants swizzled by sh (negative: none); mv1_wait waits for them.
__device__ __forceinline__ void mv1_stage(uint8_t* xs, const uint8_t* X, int n, int K, int sh) {
    const unsigned base = (unsigned)__cvta_generic_to_shared(xs);
    for (int q = threadIdx.x; q < n / 16; q += blockDim.x) {
        const int p = sh >= 0 && q < K / 16 ? mv1_swz(q, sh) : q;
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(base + 16 * p), "l"(X + 16 * q) : "memory");
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}
__device__ __forceinline__ void mv1_wait() {
    asm volatile("cp.async.wait_all;" ::: "memory");
    __syncthreads();
}

// mv1_ready is called by every thread of a block after its first weight loads: it waits
// for the kernel before (pdl_wait; the activation row is its output), then with SM copies
// the row into shared memory xs and returns it, else returns the row in global memory.
template <bool SM>
__device__ __forceinline__ const uint8_t* mv1_ready(const uint8_t* Xg, uint8_t* xs, int n, int K, int sh) {
    pdl_wait();
    if (!SM) return Xg;
    mv1_stage(xs, Xg, n, K, sh);
    mv1_wait();
    return xs;
}

// mv1_store writes the warp's row sums acc[i] of rows r0 + i < M.
template <int R>
__device__ __forceinline__ void mv1_store(float* acc, float* D, int r0, int M) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int i = 0; i < R; i++) {
        const float s = warp_sum(acc[i]);
        if (lane == 0 && r0 + i < M) D[r0 + i] = s;
    }
}

// Q4_K: lane c = lane & 3 of block ib = lane / 4 (+ 8 per step), as mmv_q4_k.
template <bool SM>
__device__ __forceinline__ void mv1_q4_k(const uint8_t* W, i64 ws, const uint8_t* Xg, uint8_t* xs, int n, float* D, int M, int K, int rb) {
    const int lane = threadIdx.x & 31, c = lane & 3, nb = K / 256;
    const int r0 = (rb * 4 + (threadIdx.x >> 5)) * Q4K_R1;
    const uint8_t* w[Q4K_R1];
#pragma unroll
    for (int i = 0; i < Q4K_R1; i++) w[i] = W + (i64)min(r0 + i, M - 1) * ws;
    uint4 h[Q4K_R1], qa[Q4K_R1], qb[Q4K_R1];
    int ib = lane >> 2;
    if (ib < nb) {
#pragma unroll
        for (int i = 0; i < Q4K_R1; i++) {
            const uint8_t* p = w[i] + 144 * ib;
            h[i] = *(const uint4*)p, qa[i] = *(const uint4*)(p + 16 + 32 * c), qb[i] = *(const uint4*)(p + 32 + 32 * c);
        }
    }
    const uint8_t* X = mv1_ready<SM>(Xg, xs, n, K, 0);
    float acc[Q4K_R1];
#pragma unroll
    for (int i = 0; i < Q4K_R1; i++) acc[i] = 0;
    for (; ib < nb; ib += 8) {
        uint4 nh[Q4K_R1], na[Q4K_R1], nq[Q4K_R1];
        if (ib + 8 < nb) {
#pragma unroll
            for (int i = 0; i < Q4K_R1; i++) {
                const uint8_t* p = w[i] + 144 * (ib + 8);
                nh[i] = *(const uint4*)p, na[i] = *(const uint4*)(p + 16 + 32 * c), nq[i] = *(const uint4*)(p + 32 + 32 * c);
            }
        }
        const int4* xb = (const int4*)(X + 256 * ib + 64 * c);
        const int s = SM ? ((ib & 1) << 1) | (c >> 1) : 0;
        const int4 x0v = xb[0 ^ s], x1v = xb[1 ^ s], x2v = xb[2 ^ s], x3v = xb[3 ^ s];
        const int xs[16] = {x0v.x, x0v.y, x0v.z, x0v.w, x1v.x, x1v.y, x1v.z, x1v.w,
                            x2v.x, x2v.y, x2v.z, x2v.w, x3v.x, x3v.y, x3v.z, x3v.w};
        const float yd = ((const float*)(X + K))[ib];
        const int4 bs = *(const int4*)(X + Q8K_BSUMS(K) + 64 * ib + 16 * c);
#pragma unroll
        for (int i = 0; i < Q4K_R1; i++) {
            int sb;
            const int sa = q4k_dot(qa[i], qb[i], xs, &sb);
            acc[i] += q4k_part(h[i], c, sa, sb, yd, bs);
            h[i] = nh[i], qa[i] = na[i], qb[i] = nq[i];
        }
    }
    mv1_store<Q4K_R1>(acc, D, r0, M);
}

// q6k_vals are the 6-bit quants (less 32) of a Q6_K lane's four 16-byte groups.
__device__ __forceinline__ void q6k_vals(uint4 qa, uint4 qb, uint4 qh, int v[4][4]) {
    const uint32_t A[4] = {qa.x, qa.y, qa.z, qa.w}, B[4] = {qb.x, qb.y, qb.z, qb.w}, H[4] = {qh.x, qh.y, qh.z, qh.w};
#pragma unroll
    for (int k = 0; k < 4; k++) {
        v[0][k] = __vsub4((A[k] & 0x0f0f0f0f) | ((H[k] & 0x03030303) << 4), 0x20202020);
        v[1][k] = __vsub4((B[k] & 0x0f0f0f0f) | (((H[k] >> 2) & 0x03030303) << 4), 0x20202020);
        v[2][k] = __vsub4(((A[k] >> 4) & 0x0f0f0f0f) | (((H[k] >> 4) & 0x03030303) << 4), 0x20202020);
        v[3][k] = __vsub4(((B[k] >> 4) & 0x0f0f0f0f) | (((H[k] >> 6) & 0x03030303) << 4), 0x20202020);
    }
}

// Q6_K: lane t = lane & 3 (h = t / 2, g = t % 2) of block ib = lane / 4 (+ 8 per step),
// as mmv_q6_k; the four scales come in one 8-byte load.
template <bool SM>
__device__ __forceinline__ void mv1_q6_k(const uint8_t* W, i64 ws, const uint8_t* Xg, uint8_t* xs, int n, float* D, int M, int K, int rb) {
    const int lane = threadIdx.x & 31, t = lane & 3, h = t >> 1, g = t & 1, nb = K / 256;
    const int r0 = (rb * 4 + (threadIdx.x >> 5)) * Q6K_R1;
    const uint8_t* w[Q6K_R1];
#pragma unroll
    for (int i = 0; i < Q6K_R1; i++) w[i] = W + (i64)min(r0 + i, M - 1) * ws;
    uint4 qa[Q6K_R1], qb[Q6K_R1], qh[Q6K_R1];
    uint2 sc[Q6K_R1];
    uint16_t dw[Q6K_R1];
    int ib = lane >> 2;
#define Q6K_LOAD(QA, QB, QH, SC, DW, IB)                                                   \
    _Pragma("unroll") for (int i = 0; i < Q6K_R1; i++) {                                  \
        const uint8_t* ql = w[i] + 128 * (IB) + 64 * h + 16 * g;                          \
        QA[i] = *(const uint4*)ql, QB[i] = *(const uint4*)(ql + 32);                      \
        QH[i] = *(const uint4*)(w[i] + 128 * nb + 64 * (IB) + 32 * h + 16 * g);           \
        SC[i] = *(const uint2*)(w[i] + 192 * nb + 16 * (IB) + 8 * h);                     \
        DW[i] = *(const uint16_t*)(w[i] + 208 * nb + 2 * (IB));                           \
    }
    if (ib < nb) { Q6K_LOAD(qa, qb, qh, sc, dw, ib) }
    const uint8_t* X = mv1_ready<SM>(Xg, xs, n, K, 1);
    float acc[Q6K_R1];
#pragma unroll
    for (int i = 0; i < Q6K_R1; i++) acc[i] = 0;
    for (; ib < nb; ib += 8) {
        uint4 na[Q6K_R1], nq[Q6K_R1], nh[Q6K_R1];
        uint2 nsc[Q6K_R1];
        uint16_t ndw[Q6K_R1];
        if (ib + 8 < nb) { Q6K_LOAD(na, nq, nh, nsc, ndw, ib + 8) }
        const uint8_t* xb = X + 256 * ib + 128 * h + 16 * g;
        const int sw = SM ? ((ib & 1) << 1) | h : 0;
        int4 xv[4];
#pragma unroll
        for (int s = 0; s < 4; s++) xv[s] = *(const int4*)(xb + 32 * (s ^ sw));
        const float yd = ((const float*)(X + K))[ib];
#pragma unroll
        for (int i = 0; i < Q6K_R1; i++) {
            int v[4][4], sum[4];
            q6k_vals(qa[i], qb[i], qh[i], v);
#pragma unroll
            for (int s = 0; s < 4; s++)
                sum[s] = __dp4a(v[s][0], xv[s].x, __dp4a(v[s][1], xv[s].y, __dp4a(v[s][2], xv[s].z, __dp4a(v[s][3], xv[s].w, 0))));
            const int s0 = (int8_t)(sc[i].x >> (8 * g)), s1 = (int8_t)(sc[i].x >> (8 * g + 16));
            const int s2 = (int8_t)(sc[i].y >> (8 * g)), s3 = (int8_t)(sc[i].y >> (8 * g + 16));
            const float d = h2f(dw[i]);
            acc[i] += d * yd * (float)(s0 * sum[0] + s1 * sum[1] + s2 * sum[2] + s3 * sum[3]);
            qa[i] = na[i], qb[i] = nq[i], qh[i] = nh[i], sc[i] = nsc[i], dw[i] = ndw[i];
        }
    }
#undef Q6K_LOAD
    mv1_store<Q6K_R1>(acc, D, r0, M);
}

// Q8_0: lane pair lane / 2 takes block ib0 + lane / 2 (ib0 += 16 per step), as mmv_q8_0.
template <bool SM>
__device__ __forceinline__ void mv1_q8_0(const uint8_t* W, i64 ws, const uint8_t* Xg, uint8_t* xs, int n, float* D, int M, int K, int rb) {
    const int lane = threadIdx.x & 31, half = lane & 1, nb = K / 32;
    const int r0 = (rb * 4 + (threadIdx.x >> 5)) * Q80_R1;
    const uint8_t* w[Q80_R1];
#pragma unroll
    for (int i = 0; i < Q80_R1; i++) w[i] = W + (i64)min(r0 + i, M - 1) * ws;
    int4 q[Q80_R1];
    uint16_t dw[Q80_R1];
    // Every lane runs the same number of iterations so that the pair shuffle is legal;
    // a lane past the last block loads the last one again and adds nothing.
    int ib = min(lane >> 1, nb - 1);
#pragma unroll
    for (int i = 0; i < Q80_R1; i++) q[i] = *(const int4*)(w[i] + 32 * ib + 16 * half), dw[i] = *(const uint16_t*)(w[i] + 32 * nb + 2 * ib);
    const uint8_t* X = mv1_ready<SM>(Xg, xs, n, K, -1);
    float acc[Q80_R1];
#pragma unroll
    for (int i = 0; i < Q80_R1; i++) acc[i] = 0;
    for (int ib0 = 0; ib0 < nb; ib0 += 16) {
        const bool ok = ib0 + (lane >> 1) < nb;
        const int in = min(ib0 + 16 + (lane >> 1), nb - 1);
        int4 nq[Q80_R1];
        uint16_t ndw[Q80_R1];
        if (ib0 + 16 < nb) {
#pragma unroll
            for (int i = 0; i < Q80_R1; i++) nq[i] = *(const int4*)(w[i] + 32 * in + 16 * half), ndw[i] = *(const uint16_t*)(w[i] + 32 * nb + 2 * in);
        }
        const int4 xv = *(const int4*)(X + 32 * ib + 16 * half);
        const float dx = ((const float*)(X + K))[ib];
#pragma unroll
        for (int i = 0; i < Q80_R1; i++) {
            int s = __dp4a(q[i].x, xv.x, __dp4a(q[i].y, xv.y, __dp4a(q[i].z, xv.z, __dp4a(q[i].w, xv.w, 0))));
            s += __shfl_xor_sync(0xffffffffu, s, 1);
            if (ok && half == 0) acc[i] += (float)s * (h2f(dw[i]) * dx);
            q[i] = nq[i], dw[i] = ndw[i];
        }
        ib = in;
    }
    mv1_store<Q80_R1>(acc, D, r0, M);
}

// mv1 is the batch-1 product of type T: row block rb of D[r] = dot(W[r, :], X). With
// PRE (a kernel opened by pdl_defer) the first weight loads come before pdl_wait.
template <int T, bool PRE>
__device__ __forceinline__ void mv1(const uint8_t* W, i64 ws, const uint8_t* X, float* D, int M, int K, int rb) {
    extern __shared__ __align__(16) uint8_t mv1_x[];
    if (!PRE) pdl_wait();
    const int n = mv1_bytes(T, K);
    if (dyn_smem_size() >= (unsigned)n) {
        if (T == T_Q4_K) mv1_q4_k<true>(W, ws, X, mv1_x, n, D, M, K, rb);
        else if (T == T_Q6_K) mv1_q6_k<true>(W, ws, X, mv1_x, n, D, M, K, rb);
        else mv1_q8_0<true>(W, ws, X, mv1_x, n, D, M, K, rb);
    } else {
        if (T == T_Q4_K) mv1_q4_k<false>(W, ws, X, mv1_x, n, D, M, K, rb);
        else if (T == T_Q6_K) mv1_q6_k<false>(W, ws, X, mv1_x, n, D, M, K, rb);
        else mv1_q8_0<false>(W, ws, X, mv1_x, n, D, M, K, rb);
    }
}

#define MMV_ONE(NAME, BODY, NX) \
    extern "C" __global__ void __launch_bounds__(128) mmv_##NAME##_##NX(MMV_ARGS) { pdl_entry(); BODY<NX>(W, wstride, X, xstride, D, dstride, M, K, nx, blockIdx.x); }
#define MMV(NAME, BODY) MMV_ONE(NAME, BODY, 1) MMV_ONE(NAME, BODY, 2) MMV_ONE(NAME, BODY, 4) MMV_ONE(NAME, BODY, 8)
// MMV_FAST: the batch-1 kernel of Q4_K, Q6_K and Q8_0 is mv1 (launched with the
// activation row's bytes of dynamic shared memory, mv1_bytes).
#define MMV_FAST(NAME, BODY, T) \
    extern "C" __global__ void __launch_bounds__(128) mmv_##NAME##_1(MMV_ARGS) { pdl_defer(); mv1<T, true>(W, wstride, X, D, M, K, blockIdx.x); } \
    MMV_ONE(NAME, BODY, 2) MMV_ONE(NAME, BODY, 4) MMV_ONE(NAME, BODY, 8)

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
GEN(T_Q5_K)

MMV(f32, gen_T_F32)
MMV(f16, gen_T_F16)
MMV(bf16, gen_T_BF16)
MMV(q4_0, gen_T_Q4_0)
MMV(q4_1, gen_T_Q4_1)
MMV(q5_0, gen_T_Q5_0)
MMV(q5_1, gen_T_Q5_1)
MMV(q2_k, gen_T_Q2_K)
MMV(q3_k, gen_T_Q3_K)
MMV(q5_k, gen_T_Q5_K)
MMV_FAST(q4_k, mmv_q4_k, T_Q4_K)
MMV_FAST(q6_k, mmv_q6_k, T_Q6_K)
MMV_FAST(q8_0, mmv_q8_0, T_Q8_0)

// mmv_id_*: mat-vecs of rows that each have their own matrix (a mixture of experts'
// (token, slot) pairs; per-head projections): row z = blockIdx.x / nrb multiplies
// matrix e (estride bytes apart in W; e = ids[z], or z / epz when ids is null) by
// activation row z / xdiv into dst row z; nrb row blocks per row. Each dot is computed
// as by mmv_*_1 (for Q4_K, Q6_K and Q8_0: mv1, with the same dynamic shared memory).
#define MMV_ID(NAME, BODY) \
    extern "C" __global__ void __launch_bounds__(128) mmv_id_##NAME(MMV_ARGS, const int* ids, i64 estride, int xdiv, int nrb, int epz) { pdl_entry(); \
        const int z = blockIdx.x / nrb; \
        const int e = ids ? ids[z] : z / epz; \
        BODY<1>(W + (i64)e * estride, wstride, X + (i64)(z / xdiv) * xstride, xstride, D + (i64)z * dstride, dstride, M, K, 1, \
                blockIdx.x % nrb); \
    }
MMV_ID(f32, gen_T_F32)
MMV_ID(f16, gen_T_F16)
MMV_ID(bf16, gen_T_BF16)
MMV_ID(q4_0, gen_T_Q4_0)
MMV_ID(q4_1, gen_T_Q4_1)
MMV_ID(q5_0, gen_T_Q5_0)
MMV_ID(q5_1, gen_T_Q5_1)
MMV_ID(q2_k, gen_T_Q2_K)
MMV_ID(q3_k, gen_T_Q3_K)
MMV_ID(q5_k, gen_T_Q5_K)
#define MMV_ID_FAST(NAME, T) \
    extern "C" __global__ void __launch_bounds__(128) mmv_id_##NAME(MMV_ARGS, const int* ids, i64 estride, int xdiv, int nrb, int epz) { pdl_entry(); \
        const int z = blockIdx.x / nrb; \
        const int e = ids ? ids[z] : z / epz; \
        mv1<T, false>(W + (i64)e * estride, wstride, X + (i64)(z / xdiv) * xstride, D + (i64)z * dstride, M, K, blockIdx.x % nrb); \
    }
MMV_ID_FAST(q4_k, T_Q4_K)
MMV_ID_FAST(q6_k, T_Q6_K)
MMV_ID_FAST(q8_0, T_Q8_0)

// mmv_multi: up to three projections of one activation row in one launch (the fused
// Q/K/V and gate/up products of a decode step), each Q4_K, Q6_K or Q8_0 with the same dot
// partner, each dot as by mv1 (with the same dynamic shared memory); grid: the
// projections' row blocks (mv1_rows) one after the other (M = 0 for none).
extern "C" __global__ void __launch_bounds__(128)
mmv_multi(const uint8_t* X, i64 xstride, int K,
          const uint8_t* W0, i64 ws0, float* D0, int M0, int t0,
          const uint8_t* W1, i64 ws1, float* D1, int M1, int t1,
          const uint8_t* W2, i64 ws2, float* D2, int M2, int t2) { pdl_defer();
    int b = blockIdx.x;
    const int rpb0 = mv1_rows(t0), rpb1 = mv1_rows(t1);
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
    if (T == T_Q4_K)
        mv1<T_Q4_K, true>(W, ws, X, D, M, K, b);
    else if (T == T_Q6_K)
        mv1<T_Q6_K, true>(W, ws, X, D, M, K, b);
    else
        mv1<T_Q8_0, true>(W, ws, X, D, M, K, b);
}
