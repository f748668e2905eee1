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
// A block of 512 threads (16 warps: 8 of 32 weight rows, two m16 tiles, times 2 of 32
// activation rows) takes 256 weight rows x 64 activation rows; steps of 256 elements of
// K, the raw weight blocks and the f16 activation rows of mf_stages steps in flight in
// shared memory (cp.async); the weights of the first steps are requested before the
// wait for the kernel before (pdl_defer). At most 128 registers a thread, so that the
// 16 warps hide each other's latencies (with 8 warps of 64 activation rows and 255
// registers the first version issued an instruction every 3.3 cycles a scheduler).
// Grid: (ceil(M / 256), ceil(N / 64) * splits); with splits > 1 the steps are divided
// among the y blocks of a tile, which write part[split][N][M] for mmq_reduce.
#include "common.cuh"

#define MF_TM 256  // weight rows a block
#define MF_TN 64   // activation rows a block
#define MF_NT 512  // threads
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

// mf_issue_w requests this thread's pieces of the weight rows of step `step` into st:
// thread t copies row t / 2's 16-byte chunks of parity t % 2 (wrow: the row, or row 0
// with ok false past M).
template <int T>
__device__ __forceinline__ void mf_issue_w(uint8_t* st, const uint8_t* wrow, bool ok, int nb, int step) {
    constexpr int WLD = mf_wld<T>();
    const int r = threadIdx.x >> 1, cp = threadIdx.x & 1;
    uint8_t* dst = st + r * WLD + 16 * cp;
    if (T == T_Q4_K) {
        const uint8_t* src = wrow + 144 * step + 16 * cp;
#pragma unroll
        for (int j = 0; j < 5; j++)
            if (cp + 2 * j < 9) tc_cp16(dst + 32 * j, src + 32 * j, ok);
    } else {
#pragma unroll
        for (int j = 0; j < 4; j++) tc_cp16(dst + 32 * j, wrow + 128 * step + 16 * cp + 32 * j, ok);  // ql
#pragma unroll
        for (int j = 0; j < 2; j++) tc_cp16(dst + 128 + 32 * j, wrow + 128 * nb + 64 * step + 16 * cp + 32 * j, ok);  // qh
        tc_cp16(dst + 192, cp ? wrow + 208 * nb + ((2 * step) & ~15) : wrow + 192 * nb + 16 * step, ok);  // scales, d
    }
}

// mf_issue_x requests this thread's pieces of the activation rows of step `step` into
// xs: thread t copies chunks t % 8 + 8j of row t / 8 (xrow, ok as mf_issue_w's).
__device__ __forceinline__ void mf_issue_x(uint8_t* xs, const uint8_t* xrow, bool ok, int step) {
    const int q = threadIdx.x & 7;
    uint8_t* dst = xs + (threadIdx.x >> 3) * MF_XLD + 16 * q;
    const uint8_t* src = xrow + 512 * step + 16 * q;
#pragma unroll
    for (int j = 0; j < 4; j++) tc_cp16(dst + 144 * j, src + 128 * j, ok);
}

template <int T>
__device__ __forceinline__ void mf_kernel(const uint8_t* W, i64 wstride, const uint8_t* X, i64 xstride, float* D,
                                          i64 dstride, int M, int K, int N, float* part, int ntiles) {
    extern __shared__ __align__(16) uint8_t mf_raw[];
    constexpr int WLD = mf_wld<T>(), S = mf_stages<T>(), SB = mf_stage_bytes<T>();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, c = lane & 3;
    const int wm = warp & 7, wn = warp >> 3;
    const int row0 = blockIdx.x * MF_TM, tile = blockIdx.y % ntiles, split = blockIdx.y / ntiles;
    const int nsplit = gridDim.y / ntiles, n0 = tile * MF_TN;
    const int nb = K / 256, per = (nb + nsplit - 1) / nsplit, s0 = split * per, s1 = min(nb, s0 + per);
    const int nn = max(0, min(4, (N - n0 - 32 * wn + 7) / 8));  // this warp's n8 tiles holding activation rows

    const int wr_ = row0 + (threadIdx.x >> 1), xr_ = n0 + (threadIdx.x >> 3);
    const bool wok = wr_ < M, xok = (threadIdx.x >> 3) < MF_TN && xr_ < N;
    const uint8_t* wrow = W + (i64)(wok ? wr_ : 0) * wstride;
    const uint8_t* xrow = X + (i64)(xok ? xr_ : 0) * xstride;
    for (int p = 0; p < S - 1; p++)
        if (s0 + p < s1) mf_issue_w<T>(mf_raw + p * SB, wrow, wok, nb, s0 + p);
    pdl_wait();
    for (int p = 0; p < S - 1; p++) {
        if (s0 + p < s1 && threadIdx.x < 8 * MF_TN) mf_issue_x(mf_raw + p * SB + MF_TM * WLD, xrow, xok, s0 + p);
        tc_commit();
    }

    float acc[2][4][4];
#pragma unroll
    for (int mi = 0; mi < 2; mi++)
#pragma unroll
        for (int ni = 0; ni < 4; ni++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[mi][ni][e] = 0;

    for (int step = s0; step < s1; step++) {
        const int i = step - s0;
        mf_wait<S - 2>();
        __syncthreads();
        if (step + S - 1 < s1) {
            uint8_t* nx = mf_raw + ((i + S - 1) % S) * SB;
            mf_issue_w<T>(nx, wrow, wok, nb, step + S - 1);
            if (threadIdx.x < 8 * MF_TN) mf_issue_x(nx + MF_TM * WLD, xrow, xok, step + S - 1);
        }
        tc_commit();
        if (nn == 0) continue;
        const uint8_t* st = mf_raw + (i % S) * SB;
        const uint8_t* xs = st + MF_TM * WLD + (32 * wn + g) * MF_XLD;
        // This lane's four weight rows: 16 mi + 8 hh + g of the warp's 32.
        const uint8_t* wr[2][2];
#pragma unroll
        for (int mi = 0; mi < 2; mi++)
#pragma unroll
            for (int hh = 0; hh < 2; hh++) wr[mi][hh] = st + (wm * 32 + 16 * mi + 8 * hh + g) * WLD;

        if (T == T_Q4_K) {
            // Per row: the f16 scale and -min of sub-blocks 2c (nib 0) and 2c+1 (nib 1),
            // getScaleMinK4 from the scale words (bytes 0-3, 4-7, 8-11 of the 12).
            __half2 sa[2][2][2], sb[2][2][2];
#pragma unroll
            for (int mi = 0; mi < 2; mi++)
#pragma unroll
                for (int hh = 0; hh < 2; hh++) {
                    const uint4 hd = mf_lds128(wr[mi][hh]);
                    const float d = h2f(hd.x & 0xffff), dmin = h2f(hd.x >> 16);
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
            for (int pp = 0; pp < 2; pp++) {
                // qs bytes 32c + 16pp .. +16 of each row: words 2p, 2p+1 of p = 2pp, 2pp+1.
                uint4 qv[2][2];
#pragma unroll
                for (int mi = 0; mi < 2; mi++)
#pragma unroll
                    for (int hh = 0; hh < 2; hh++) qv[mi][hh] = mf_lds128(wr[mi][hh] + 16 + 32 * c + 16 * pp);
#pragma unroll
                for (int gi = 0; gi < 4; gi++) {
                    const int pl = gi >> 1, nib = gi & 1, p = 2 * pp + pl;
                    uint32_t A[2][2][4];  // [slot][mi][register]
#pragma unroll
                    for (int mi = 0; mi < 2; mi++)
#pragma unroll
                        for (int hh = 0; hh < 2; hh++)
#pragma unroll
                            for (int t = 0; t < 2; t++) {
                                const uint32_t w = pl ? (t ? qv[mi][hh].w : qv[mi][hh].z) : (t ? qv[mi][hh].y : qv[mi][hh].x);
                                mf_q4((w >> (4 * nib)) & 0x0f0f0f0fu, sa[mi][hh][nib], sb[mi][hh][nib], &A[t][mi][hh],
                                      &A[t][mi][2 + hh]);
                            }
                    const int xo = mf_xoff(64 * c + 32 * nib + 8 * p);
#pragma unroll
                    for (int ni = 0; ni < 4; ni++) {
                        if (ni < nn) {
                            const uint4 bv = mf_lds128(xs + ni * 8 * MF_XLD + xo);
#pragma unroll
                            for (int mi = 0; mi < 2; mi++) tc_mma(acc[mi][ni], A[0][mi], bv.x, bv.y);
#pragma unroll
                            for (int mi = 0; mi < 2; mi++) tc_mma(acc[mi][ni], A[1][mi], bv.z, bv.w);
                        }
                    }
                }
            }
        } else {
            const int dpos = 208 + ((2 * step) & 15);  // d in the 16 bytes holding it
#pragma unroll
            for (int h = 0; h < 2; h++) {
                // Per row: d times scales 8h + 2s + c/2 (s = 0..3) in f16, and qh bytes 32h + 8c.
                __half2 sa[2][2][4];
                uint2 qh[2][2];
#pragma unroll
                for (int mi = 0; mi < 2; mi++)
#pragma unroll
                    for (int hh = 0; hh < 2; hh++) {
                        const uint8_t* r = wr[mi][hh];
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
                for (int sp = 0; sp < 2; sp++) {
                    // ql bytes 64h + 32sp + 8c: nibble 0 for s = sp, 1 for s = sp + 2.
                    uint2 ql[2][2];
#pragma unroll
                    for (int mi = 0; mi < 2; mi++)
#pragma unroll
                        for (int hh = 0; hh < 2; hh++) ql[mi][hh] = mf_lds64(wr[mi][hh] + 64 * h + 32 * sp + 8 * c);
#pragma unroll
                    for (int sn = 0; sn < 2; sn++) {
                        const int s = sp + 2 * sn;
                        uint32_t A[2][2][4];  // [slot][mi][register]
#pragma unroll
                        for (int mi = 0; mi < 2; mi++)
#pragma unroll
                            for (int hh = 0; hh < 2; hh++)
#pragma unroll
                                for (int t = 0; t < 2; t++) {
                                    const uint32_t lw = t ? ql[mi][hh].y : ql[mi][hh].x;
                                    const uint32_t hw = t ? qh[mi][hh].y : qh[mi][hh].x;
                                    const uint32_t v =
                                        ((lw >> (4 * sn)) & 0x0f0f0f0fu) | (((hw >> (2 * s)) & 0x03030303u) << 4);
                                    mf_q6(v, sa[mi][hh][s], &A[t][mi][hh], &A[t][mi][2 + hh]);
                                }
                        const int xo = mf_xoff(128 * h + 32 * s + 8 * c);
#pragma unroll
                        for (int ni = 0; ni < 4; ni++) {
                            if (ni < nn) {
                                const uint4 bv = mf_lds128(xs + ni * 8 * MF_XLD + xo);
#pragma unroll
                                for (int mi = 0; mi < 2; mi++) tc_mma(acc[mi][ni], A[0][mi], bv.x, bv.y);
#pragma unroll
                                for (int mi = 0; mi < 2; mi++) tc_mma(acc[mi][ni], A[1][mi], bv.z, bv.w);
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
        for (int ni = 0; ni < 4; ni++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int m = row0 + wm * 32 + 16 * mi + g + 8 * (e >> 1);
                const int n = n0 + 32 * wn + 8 * ni + 2 * c + (e & 1);
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
