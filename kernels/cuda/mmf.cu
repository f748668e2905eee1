// mmf.cu: products of a few dozen activation rows (batched decode) over Q4_K and Q6_K
// weights on the f16 tensor cores, the weights dequantized in registers.
//
// dst[i, r] = dot(w[r, :], x[i, :]) with x as f16 rows (cuBLASLt's activation rows:
// act_f16 of the partner-rounded values) and each weight as f16, f32 sums. mmq's int8
// products are bound by their instructions at a few dozen rows (a sub-block's scales
// applied to every output a mma makes); here each weight is dequantized once a block,
// its scale and min applied to the weight itself (half2 arithmetic), and each fragment
// serves every activation row of the tile.
//
// K is permuted inside each 256-element step, the same way for both operands, so that a
// lane's fragments come straight from the bytes it holds: for m16n8k16, lane (g, c)
// (g = lane / 4, c = lane % 4) gives A k = 2c, 2c+1 and 2c+8, 2c+9 of rows g and g+8,
// and B the same k of column g. Here a lane's 16 k of one mma pair are eight contiguous
// elements of the step (a "group"): slot 0 takes elements e0..e0+3 (k 2c, 2c+1 = e0,
// e0+1; k 2c+8, 2c+9 = e0+2, e0+3), slot 1 e0+4..e0+7. So B is one 16-byte load of the
// activation row per group. The groups of lane c:
//   Q4_K: elements 64c + 32 nib + 8 p + j (nib, p = group / 4, group % 4): qs bytes
//         32c + 8p + j, low nibbles for nib 0 (sub-block 2c), high for 1 (2c + 1);
//   Q6_K: elements 128 h + 32 s + 8c + j (h, s = group / 4, group % 4): ql bytes
//         64 h + 32 (s % 2) + 8c + j (nibble s / 2), qh bytes 32 h + 8c + j (bits 2s),
//         scale 8 h + 2 s + c / 2.
// A weight becomes f16 as 1024 + q (0x6400 | q: exact), less 1024 (Q6_K: 1056), times the
// f16 scale, less the f16 min (one rounding, __hfma2; Q6_K __hmul2).
//
// A block of 256 threads (8 warps of 32 weight rows: two m16 tiles) takes 256 weight rows
// x 64 activation rows; steps of 256 elements of K, the raw weight blocks and the f16
// activation rows of MF_STAGES steps in flight in shared memory (cp.async); the weights
// of the first steps are requested before the wait for the kernel before (pdl_defer).
// Grid: (ceil(M / 256), ceil(N / 64) * splits); with splits > 1 the steps are divided
// among the y blocks of a tile, which write part[split][N][M] for mmq_reduce.
#include "common.cuh"

#define MF_TM 256  // weight rows a block
#define MF_TN 64   // activation rows a block
#define MF_NT 256  // threads
#define MF_XLD 576 // an activation row of a stage: 256 halves, 16 bytes of padding after each 64

// Bytes of a weight row of a stage: Q4_K the 144-byte block; Q6_K ql 128 | qh 64 |
// scales 16 | the 16 bytes holding d. Steps in flight: three for Q4_K, two for Q6_K (the
// most 227 KiB allow); mmf.go computes the same.
template <int T>
__host__ __device__ constexpr int mf_wld() { return T == T_Q4_K ? 144 : 224; }
template <int T>
__host__ __device__ constexpr int mf_stages() { return T == T_Q4_K ? 3 : 2; }
template <int T>
__host__ __device__ constexpr int mf_stage_bytes() { return MF_TM * mf_wld<T>() + MF_TN * MF_XLD; }

// mf_xoff is the byte offset of element k of a step in a stage's activation row.
__device__ __forceinline__ int mf_xoff(int k) { return 2 * k + 16 * (k >> 6); }

template <int N>
__device__ __forceinline__ void mf_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }

__device__ __forceinline__ uint4 mf_lds128(const uint8_t* p) {
    uint4 v;
    const uint32_t a = (uint32_t)__cvta_generic_to_shared(p);
    asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(a));
    return v;
}

__device__ __forceinline__ uint2 mf_lds64(const uint8_t* p) {
    uint2 v;
    const uint32_t a = (uint32_t)__cvta_generic_to_shared(p);
    asm volatile("ld.shared.v2.u32 {%0,%1}, [%2];" : "=r"(v.x), "=r"(v.y) : "r"(a));
    return v;
}

// mf_issue_w requests weight rows row0.. of step `step` (nb steps a row) into st.
template <int T>
__device__ __forceinline__ void mf_issue_w(uint8_t* st, const uint8_t* W, i64 wstride, int M, int nb, int row0,
                                           int step) {
    constexpr int WLD = mf_wld<T>(), CH = WLD / 16;
    for (int e = threadIdx.x; e < MF_TM * CH; e += MF_NT) {
        const int r = e / CH, c = e % CH;
        const bool ok = row0 + r < M;
        const uint8_t* wr = W + (i64)(ok ? row0 + r : 0) * wstride;
        const uint8_t* src;
        if (T == T_Q4_K)
            src = wr + 144 * step + 16 * c;
        else
            src = c < 8    ? wr + 128 * step + 16 * c
                  : c < 12 ? wr + 128 * nb + 64 * step + 16 * (c - 8)
                  : c < 13 ? wr + 192 * nb + 16 * step
                           : wr + 208 * nb + ((2 * step) & ~15);
        tc_cp16(st + r * WLD + 16 * c, src, ok);
    }
}

// mf_issue_x requests activation rows n0.. (of N) of step `step` into xs.
__device__ __forceinline__ void mf_issue_x(uint8_t* xs, const uint8_t* X, i64 xstride, int N, int n0, int step) {
    for (int e = threadIdx.x; e < MF_TN * 32; e += MF_NT) {
        const int r = e >> 5, c = e & 31;
        const bool ok = n0 + r < N;
        const uint8_t* src = X + (i64)(ok ? n0 + r : 0) * xstride + 512 * step + 16 * c;
        tc_cp16(xs + r * MF_XLD + 16 * c + 16 * (c >> 3), src, ok);
    }
}

// mf_q4 turns four 4-bit quants (the low nibbles of v's bytes) into the f16 pairs of a
// slot: lo holds elements 0, 1, hi 2, 3; w = q * a + b.
__device__ __forceinline__ void mf_q4(uint32_t v, __half2 a, __half2 b, uint32_t* lo, uint32_t* hi) {
    const __half2 k = __half2half2(__ushort_as_half(0x6400));
    const uint32_t l = __byte_perm(v, 0x64646464u, 0x4140), h = __byte_perm(v, 0x64646464u, 0x4342);
    const __half2 wl = __hfma2(__hsub2(*(const __half2*)&l, k), a, b);
    const __half2 wh = __hfma2(__hsub2(*(const __half2*)&h, k), a, b);
    *lo = *(const uint32_t*)&wl;
    *hi = *(const uint32_t*)&wh;
}

// mf_q6 is mf_q4 for four 6-bit quants q (bytes of v, 0..63): w = (q - 32) * a.
__device__ __forceinline__ void mf_q6(uint32_t v, __half2 a, uint32_t* lo, uint32_t* hi) {
    const __half2 k = __half2half2(__ushort_as_half(0x6420));  // 1056 = 1024 + 32
    const uint32_t l = __byte_perm(v, 0x64646464u, 0x4140), h = __byte_perm(v, 0x64646464u, 0x4342);
    const __half2 wl = __hmul2(__hsub2(*(const __half2*)&l, k), a);
    const __half2 wh = __hmul2(__hsub2(*(const __half2*)&h, k), a);
    *lo = *(const uint32_t*)&wl;
    *hi = *(const uint32_t*)&wh;
}

template <int T>
__device__ __forceinline__ void mf_kernel(const uint8_t* W, i64 wstride, const uint8_t* X, i64 xstride, float* D,
                                          i64 dstride, int M, int K, int N, float* part, int ntiles) {
    extern __shared__ __align__(16) uint8_t mf_raw[];
    constexpr int WLD = mf_wld<T>(), S = mf_stages<T>(), SB = mf_stage_bytes<T>();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, c = lane & 3;
    const int row0 = blockIdx.x * MF_TM, tile = blockIdx.y % ntiles, split = blockIdx.y / ntiles;
    const int nsplit = gridDim.y / ntiles, n0 = tile * MF_TN;
    const int nb = K / 256, per = (nb + nsplit - 1) / nsplit, s0 = split * per, s1 = min(nb, s0 + per);
    const int nn = min(8, (N - n0 + 7) / 8);  // n8 tiles holding activation rows

    for (int p = 0; p < S - 1; p++)
        if (s0 + p < s1) mf_issue_w<T>(mf_raw + p * SB, W, wstride, M, nb, row0, s0 + p);
    pdl_wait();
    for (int p = 0; p < S - 1; p++) {
        if (s0 + p < s1) mf_issue_x(mf_raw + p * SB + MF_TM * WLD, X, xstride, N, n0, s0 + p);
        tc_commit();
    }

    float acc[2][8][4];
#pragma unroll
    for (int mi = 0; mi < 2; mi++)
#pragma unroll
        for (int ni = 0; ni < 8; ni++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[mi][ni][e] = 0;

    for (int step = s0; step < s1; step++) {
        const int i = step - s0;
        mf_wait<S - 2>();
        __syncthreads();
        if (step + S - 1 < s1) {
            uint8_t* nx = mf_raw + ((i + S - 1) % S) * SB;
            mf_issue_w<T>(nx, W, wstride, M, nb, row0, step + S - 1);
            mf_issue_x(nx + MF_TM * WLD, X, xstride, N, n0, step + S - 1);
        }
        tc_commit();
        const uint8_t* st = mf_raw + (i % S) * SB;
        const uint8_t* xs = st + MF_TM * WLD + g * MF_XLD;
        // This lane's four weight rows: 16 mi + 8 hh + g of the warp's 32.
        const uint8_t* wr[2][2];
#pragma unroll
        for (int mi = 0; mi < 2; mi++)
#pragma unroll
            for (int hh = 0; hh < 2; hh++) wr[mi][hh] = st + (warp * 32 + 16 * mi + 8 * hh + g) * WLD;

        if (T == T_Q4_K) {
            // Per row: qs[32c, 32c+32) as 8 words, and the f16 scale and -min of
            // sub-blocks 2c (nib 0) and 2c+1 (nib 1).
            uint32_t q[2][2][8];
            __half2 sa[2][2][2], sb[2][2][2];
#pragma unroll
            for (int mi = 0; mi < 2; mi++)
#pragma unroll
                for (int hh = 0; hh < 2; hh++) {
                    const uint8_t* r = wr[mi][hh];
                    const uint4 hd = mf_lds128(r);
                    const uint4 q0 = mf_lds128(r + 16 + 32 * c), q1 = mf_lds128(r + 32 + 32 * c);
                    q[mi][hh][0] = q0.x, q[mi][hh][1] = q0.y, q[mi][hh][2] = q0.z, q[mi][hh][3] = q0.w;
                    q[mi][hh][4] = q1.x, q[mi][hh][5] = q1.y, q[mi][hh][6] = q1.z, q[mi][hh][7] = q1.w;
                    const float d = h2f(hd.x & 0xffff), dmin = h2f(hd.x >> 16);
                    // getScaleMinK4 of sub-blocks j = 2c + nib from the scale words
                    // (bytes 0-3, 4-7, 8-11 of the 12).
#pragma unroll
                    for (int nib = 0; nib < 2; nib++) {
                        const int j = 2 * c + nib, sh = 8 * (j & 3);
                        int s, m;
                        if (j < 4) {
                            s = (hd.y >> sh) & 63;
                            m = (hd.z >> sh) & 63;
                        } else {
                            s = ((hd.w >> sh) & 15) | (((hd.y >> sh) >> 6 & 3) << 4);
                            m = ((hd.w >> sh) >> 4 & 15) | (((hd.z >> sh) >> 6 & 3) << 4);
                        }
                        sa[mi][hh][nib] = __float2half2_rn(d * (float)s);
                        sb[mi][hh][nib] = __float2half2_rn(-(dmin * (float)m));
                    }
                }
#pragma unroll
            for (int gi = 0; gi < 8; gi++) {
                const int nib = gi >> 2, p = gi & 3;
                uint32_t A[2][2][4];  // [slot][mi][register]
#pragma unroll
                for (int mi = 0; mi < 2; mi++)
#pragma unroll
                    for (int hh = 0; hh < 2; hh++)
#pragma unroll
                        for (int t = 0; t < 2; t++)
                            mf_q4((q[mi][hh][2 * p + t] >> (4 * nib)) & 0x0f0f0f0fu, sa[mi][hh][nib], sb[mi][hh][nib],
                                  &A[t][mi][hh], &A[t][mi][2 + hh]);
                const int xo = mf_xoff(64 * c + 32 * nib + 8 * p);
#pragma unroll
                for (int ni = 0; ni < 8; ni++) {
                    if (ni < nn) {
                        const uint4 bv = mf_lds128(xs + ni * 8 * MF_XLD + xo);
#pragma unroll
                        for (int mi = 0; mi < 2; mi++) {
                            tc_mma(acc[mi][ni], A[0][mi], bv.x, bv.y);
                            tc_mma(acc[mi][ni], A[1][mi], bv.z, bv.w);
                        }
                    }
                }
            }
        } else {
            const int dpos = 208 + ((2 * step) & 15);  // d in the 16 bytes holding it
#pragma unroll
            for (int h = 0; h < 2; h++) {
                // Per row: ql bytes 64h + 32s' + 8c (s' = 0, 1), qh bytes 32h + 8c, and
                // d times scales 8h + 2s + c/2 (s = 0..3) in f16.
                uint2 ql[2][2][2], qh[2][2];
                __half2 sa[2][2][4];
#pragma unroll
                for (int mi = 0; mi < 2; mi++)
#pragma unroll
                    for (int hh = 0; hh < 2; hh++) {
                        const uint8_t* r = wr[mi][hh];
                        ql[mi][hh][0] = mf_lds64(r + 64 * h + 8 * c);
                        ql[mi][hh][1] = mf_lds64(r + 64 * h + 32 + 8 * c);
                        qh[mi][hh] = mf_lds64(r + 128 + 32 * h + 8 * c);
                        const uint2 sw = mf_lds64(r + 192 + 8 * h);
                        const float d = ldh(r + dpos);
#pragma unroll
                        for (int s = 0; s < 4; s++) {
                            const uint32_t w = s < 2 ? sw.x : sw.y;
                            const int sc = (int)(int8_t)(uint8_t)(w >> (8 * ((c >> 1) + 2 * (s & 1))));
                            sa[mi][hh][s] = __float2half2_rn(d * (float)sc);
                        }
                    }
#pragma unroll
                for (int s = 0; s < 4; s++) {
                    uint32_t A[2][2][4];  // [slot][mi][register]
#pragma unroll
                    for (int mi = 0; mi < 2; mi++)
#pragma unroll
                        for (int hh = 0; hh < 2; hh++)
#pragma unroll
                            for (int t = 0; t < 2; t++) {
                                const uint32_t lw = t ? ql[mi][hh][s & 1].y : ql[mi][hh][s & 1].x;
                                const uint32_t hw = t ? qh[mi][hh].y : qh[mi][hh].x;
                                const uint32_t v =
                                    ((lw >> (4 * (s >> 1))) & 0x0f0f0f0fu) | (((hw >> (2 * s)) & 0x03030303u) << 4);
                                mf_q6(v, sa[mi][hh][s], &A[t][mi][hh], &A[t][mi][2 + hh]);
                            }
                    const int xo = mf_xoff(128 * h + 32 * s + 8 * c);
#pragma unroll
                    for (int ni = 0; ni < 8; ni++) {
                        if (ni < nn) {
                            const uint4 bv = mf_lds128(xs + ni * 8 * MF_XLD + xo);
#pragma unroll
                            for (int mi = 0; mi < 2; mi++) {
                                tc_mma(acc[mi][ni], A[0][mi], bv.x, bv.y);
                                tc_mma(acc[mi][ni], A[1][mi], bv.z, bv.w);
                            }
                        }
                    }
                }
            }
        }
    }

    float* out = nsplit > 1 ? part + (i64)split * N * M : D;
    const i64 ost = nsplit > 1 ? (i64)M : dstride;
#pragma unroll
    for (int mi = 0; mi < 2; mi++)
#pragma unroll
        for (int ni = 0; ni < 8; ni++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int m = row0 + warp * 32 + 16 * mi + g + 8 * (e >> 1), n = n0 + 8 * ni + 2 * c + (e & 1);
                if (ni < nn && m < M && n < N) out[(i64)n * ost + m] = acc[mi][ni][e];
            }
}

#define MMF(NAME, T)                                                                                              \
    extern "C" __global__ void __launch_bounds__(MF_NT, 1)                                                        \
        mmf_##NAME(const uint8_t* W, i64 wstride, const uint8_t* X, i64 xstride, float* D, i64 dstride, int M,    \
                   int K, int N, float* part, int ntiles) {                                                       \
        pdl_defer();                                                                                              \
        mf_kernel<T>(W, wstride, X, xstride, D, dstride, M, K, N, part, ntiles);                                  \
    }
MMF(q4_k, T_Q4_K)
MMF(q6_k, T_Q6_K)
