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
// A block of 512 threads (16 warps of 16 weight rows, each warp all 64 activation rows)
// takes 256 weight rows x 64 activation rows; steps of 256 elements of K, the weights
// and the f16 activation rows of mf_stages steps in flight in shared memory (cp.async);
// the weights of the first steps are requested before the wait for the kernel before
// (pdl_defer). Each weight is dequantized once a block, and the 16 warps hide each
// other's latencies. The weights come from a packed copy (mmf_pack: per tile of 256
// rows and step, the rows' bytes), so a block copies each step as one contiguous piece,
// and the copy holds each sub-block's scale (and Q4_K's min) as f16, so nothing is
// decoded a step. The activation rows' n8 tiles a block computes (NN: 2, 4 or 8) are a
// template parameter: no guards in the unrolled loops. (The first versions, measured on the H200 for 14336x4096 at 64 rows: 8 warps of
// 32 rows x 64 columns at 255 registers issued an instruction every 3.3 cycles a
// scheduler, 69 us; 16 warps of 32 rows x 32 columns dequantized each weight twice, 62
// us, 50 with no weight copies at all.)
#include "common.cuh"

#define MF_TM 256  // weight rows a block
#define MF_TN 64   // activation rows a block
#define MF_NT 512  // threads
#define MF_XLD 576 // an activation row of a stage: 256 halves, 16 bytes of padding after each 64

// Bytes of a weight row of a step in the packed copy and a stage: Q4_K the f16 scale and
// -min of each sub-block (a0 b0 a1 b1 ..: 32 bytes) | qs 128; Q6_K ql 128 | qh 64 | the
// sixteen f16 products d * scale (32). Two steps in flight; mmf.go computes the same.
template <int T>
__host__ __device__ constexpr int mf_wld() { return T == T_Q4_K ? 160 : 224; }
template <int T>
__host__ __device__ constexpr int mf_stages() { return 2; }
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

// mf_mma_group adds a group's two slots of A times the NN n8 tiles of activation rows
// (xs: this lane's row of the first tile; xo: the group's byte offset in a row).
template <int NN>
__device__ __forceinline__ void mf_mma_group(float (*acc)[4], const uint32_t (*A)[4], const uint8_t* xs, int xo) {
#pragma unroll
    for (int ni = 0; ni < NN; ni++) {
        const uint4 bv = mf_lds128(xs + ni * 8 * MF_XLD + xo);
        tc_mma(acc[ni], A[0], bv.x, bv.y);
        tc_mma(acc[ni], A[1], bv.z, bv.w);
    }
}

// mf_issue_w requests the step's packed weights src (MF_TM rows of mf_wld bytes) into st.
template <int T>
__device__ __forceinline__ void mf_issue_w(uint8_t* st, const uint8_t* src) {
    constexpr int CH = MF_TM * mf_wld<T>() / 16;
#pragma unroll
    for (int j = 0; j < (CH + MF_NT - 1) / MF_NT; j++) {
        const int e = threadIdx.x + MF_NT * j;
        if (CH % MF_NT == 0 || e < CH) tc_cp16(st + 16 * e, src + 16 * e, true);
    }
}

// mf_issue_x requests this thread's pieces of the activation rows of step `step` into
// xs: thread t copies chunks t % 8 + 8j of row t / 8 (xrow: the row, or row 0 with ok
// false past N).
__device__ __forceinline__ void mf_issue_x(uint8_t* xs, const uint8_t* xrow, bool ok, int step) {
    const int q = threadIdx.x & 7;
    uint8_t* dst = xs + (threadIdx.x >> 3) * MF_XLD + 16 * q;
    const uint8_t* src = xrow + 512 * step + 16 * q;
#pragma unroll
    for (int j = 0; j < 4; j++) tc_cp16(dst + 144 * j, src + 128 * j, ok);
}

// mf_pack writes the packed copy P of M rows of W (nb steps a row): chunk c of row r of
// tile t and step s at ((t nb + s) MF_TM + r) mf_wld + 16c, rows past M zeros (mf_wld
// says what a row holds). Q6_K rows are read in the device layout (ql | qh | scales | d).
template <int T>
__device__ __forceinline__ void mf_pack(const uint8_t* W, i64 wstride, int M, int nb, uint8_t* P) {
    constexpr int CH = mf_wld<T>() / 16;
    const i64 total = (i64)((M + MF_TM - 1) / MF_TM) * nb * MF_TM * CH;
    for (i64 e = blockIdx.x * (i64)blockDim.x + threadIdx.x; e < total; e += (i64)gridDim.x * blockDim.x) {
        const int c = (int)(e % CH);
        const i64 q = e / CH;
        const int row = (int)(q / ((i64)nb * MF_TM)) * MF_TM + (int)(q % MF_TM), s = (int)(q / MF_TM % nb);
        uint32_t v[4] = {0, 0, 0, 0};
        if (row < M) {
            const uint8_t* wr = W + (i64)row * wstride;
            if (T == T_Q4_K && c < 2) {  // sub-blocks 4c..4c+3: f16 d*sc, f16 -(dmin*m)
                const uint8_t* b = wr + 144 * s;
                const float d = ldh(b), dmin = ldh(b + 2);
                for (int k = 0; k < 4; k++) {
                    int sc, m;
                    scale_min_k4(4 * c + k, b + 4, &sc, &m);
                    v[k] = h2pack(f2h(d * (float)sc), f2h(-(dmin * (float)m)));
                }
            } else if (T == T_Q6_K && c >= 12) {  // scales 8(c-12)..+7: f16 d*sc
                const float d = ldh(wr + 208 * nb + 2 * s);
                const int8_t* sc = (const int8_t*)(wr + 192 * nb + 16 * s) + 8 * (c - 12);
                for (int k = 0; k < 4; k++) v[k] = h2pack(f2h(d * (float)sc[2 * k]), f2h(d * (float)sc[2 * k + 1]));
            } else {
                const uint8_t* src = T == T_Q4_K ? wr + 144 * s + 16 + 16 * (c - 2)
                                     : c < 8     ? wr + 128 * s + 16 * c
                                                 : wr + 128 * nb + 64 * s + 16 * (c - 8);
                const uint4 u = *(const uint4*)src;
                v[0] = u.x, v[1] = u.y, v[2] = u.z, v[3] = u.w;
            }
        }
        *(uint4*)(P + 16 * e) = make_uint4(v[0], v[1], v[2], v[3]);
    }
}

template <int T, int NN>
__device__ __forceinline__ void mf_kernel(const uint8_t* P, const uint8_t* X, i64 xstride, float* D, i64 dstride,
                                          int M, int K, int N, float* part, int ntiles, int early) {
    extern __shared__ __align__(16) uint8_t mf_raw[];
    constexpr int WLD = mf_wld<T>(), S = mf_stages<T>(), SB = mf_stage_bytes<T>();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, c = lane & 3;
    const int row0 = blockIdx.x * MF_TM, tile = blockIdx.y % ntiles, split = blockIdx.y / ntiles;
    const int nsplit = gridDim.y / ntiles, n0 = tile * MF_TN;
    const int nb = K / 256, per = (nb + nsplit - 1) / nsplit, s0 = split * per, s1 = min(nb, s0 + per);
    const uint8_t* wsrc = P + (i64)blockIdx.x * nb * MF_TM * WLD;  // this tile's steps

    const int xr = n0 + (threadIdx.x >> 3);
    const bool xok = xr < N;
    const uint8_t* xrow = X + (i64)(xok ? xr : 0) * xstride;
    // The packed copy is written by a kernel (mmf_pack): read before the wait only when
    // that kernel is not the one just before (early, mmf.go).
    if (early)
        for (int p = 0; p < S - 1; p++)
            if (s0 + p < s1) mf_issue_w<T>(mf_raw + p * SB, wsrc + (i64)(s0 + p) * MF_TM * WLD);
    pdl_wait();
    if (!early)
        for (int p = 0; p < S - 1; p++)
            if (s0 + p < s1) mf_issue_w<T>(mf_raw + p * SB, wsrc + (i64)(s0 + p) * MF_TM * WLD);
    for (int p = 0; p < S - 1; p++) {
        if (s0 + p < s1) mf_issue_x(mf_raw + p * SB + MF_TM * WLD, xrow, xok, s0 + p);
        tc_commit();
    }

    float acc[NN][4];
#pragma unroll
    for (int ni = 0; ni < NN; ni++)
#pragma unroll
        for (int e = 0; e < 4; e++) acc[ni][e] = 0;

    for (int step = s0; step < s1; step++) {
        const int i = step - s0;
        mf_wait<S - 2>();
        __syncthreads();
        if (step + S - 1 < s1) {
            uint8_t* nx = mf_raw + ((i + S - 1) % S) * SB;
            mf_issue_w<T>(nx, wsrc + (i64)(step + S - 1) * MF_TM * WLD);
            mf_issue_x(nx + MF_TM * WLD, xrow, xok, step + S - 1);
        }
        tc_commit();
        const uint8_t* st = mf_raw + (i % S) * SB;
        const uint8_t* xs = st + MF_TM * WLD + g * MF_XLD;
        // This lane's two weight rows: g and g + 8 of the warp's 16.
        const uint8_t* wr[2] = {st + (warp * 16 + g) * WLD, st + (warp * 16 + 8 + g) * WLD};

        if (T == T_Q4_K) {
            // Per row: the f16 scale and -min of sub-blocks 2c (nib 0) and 2c+1 (nib 1).
            __half2 sa[2][2], sb[2][2];
#pragma unroll
            for (int hh = 0; hh < 2; hh++) {
                const uint2 ab = mf_lds64(wr[hh] + 8 * c);
#pragma unroll
                for (int nib = 0; nib < 2; nib++) {
                    const __half2 v = *(const __half2*)(nib ? &ab.y : &ab.x);
                    sa[hh][nib] = __low2half2(v);
                    sb[hh][nib] = __high2half2(v);
                }
            }
#pragma unroll
            for (int pp = 0; pp < 2; pp++) {
                // qs bytes 32c + 16pp .. +16 of each row: words 2p, 2p+1 of p = 2pp, 2pp+1.
                const uint4 qv[2] = {mf_lds128(wr[0] + 32 + 32 * c + 16 * pp), mf_lds128(wr[1] + 32 + 32 * c + 16 * pp)};
#pragma unroll
                for (int gi = 0; gi < 4; gi++) {
                    const int pl = gi >> 1, nib = gi & 1, p = 2 * pp + pl;
                    uint32_t A[2][4];  // [slot][register]
#pragma unroll
                    for (int hh = 0; hh < 2; hh++)
#pragma unroll
                        for (int t = 0; t < 2; t++) {
                            const uint32_t w = pl ? (t ? qv[hh].w : qv[hh].z) : (t ? qv[hh].y : qv[hh].x);
                            mf_q4((w >> (4 * nib)) & 0x0f0f0f0fu, sa[hh][nib], sb[hh][nib], &A[t][hh], &A[t][2 + hh]);
                        }
                    const int xo = mf_xoff(64 * c + 32 * nib + 8 * p);
                    mf_mma_group<NN>(acc, A, xs, xo);
                }
            }
        } else {
#pragma unroll
            for (int h = 0; h < 2; h++) {
                // Per row: the f16 d * scale of sub-blocks 8h + 2s + c/2 (s = 0..3), and qh
                // bytes 32h + 8c.
                __half2 sa[2][4];
                uint2 qh[2];
#pragma unroll
                for (int hh = 0; hh < 2; hh++) {
                    const uint8_t* r = wr[hh];
                    qh[hh] = mf_lds64(r + 128 + 32 * h + 8 * c);
                    const uint4 sw = mf_lds128(r + 192 + 16 * h);  // scales 8h .. 8h+7
                    const uint32_t w4[4] = {sw.x, sw.y, sw.z, sw.w};
#pragma unroll
                    for (int s = 0; s < 4; s++) {
                        const __half2 v = *(const __half2*)&w4[s];  // scales 8h + 2s, 8h + 2s + 1
                        sa[hh][s] = (c >> 1) ? __high2half2(v) : __low2half2(v);
                    }
                }
#pragma unroll
                for (int sp = 0; sp < 2; sp++) {
                    // ql bytes 64h + 32sp + 8c: nibble 0 for s = sp, 1 for s = sp + 2.
                    const uint2 ql[2] = {mf_lds64(wr[0] + 64 * h + 32 * sp + 8 * c),
                                         mf_lds64(wr[1] + 64 * h + 32 * sp + 8 * c)};
#pragma unroll
                    for (int sn = 0; sn < 2; sn++) {
                        const int s = sp + 2 * sn;
                        uint32_t A[2][4];  // [slot][register]
#pragma unroll
                        for (int hh = 0; hh < 2; hh++)
#pragma unroll
                            for (int t = 0; t < 2; t++) {
                                const uint32_t lw = t ? ql[hh].y : ql[hh].x, hw = t ? qh[hh].y : qh[hh].x;
                                const uint32_t v = ((lw >> (4 * sn)) & 0x0f0f0f0fu) | (((hw >> (2 * s)) & 0x03030303u) << 4);
                                mf_q6(v, sa[hh][s], &A[t][hh], &A[t][2 + hh]);
                            }
                        const int xo = mf_xoff(128 * h + 32 * s + 8 * c);
                        mf_mma_group<NN>(acc, A, xs, xo);
                    }
                }
            }
        }
    }

    float* out = nsplit > 1 ? part + (i64)split * N * M : D;
    const i64 ost = nsplit > 1 ? (i64)M : dstride;
#pragma unroll
    for (int ni = 0; ni < NN; ni++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int m = row0 + warp * 16 + g + 8 * (e >> 1), n = n0 + 8 * ni + 2 * c + (e & 1);
            if (m < M && n < N) out[(i64)n * ost + m] = acc[ni][e];
        }
}

#define MMF(NAME, T, NN, PRE)                                                                                     \
    extern "C" __global__ void __launch_bounds__(MF_NT, 1)                                                        \
        PRE##NAME(const uint8_t* P, const uint8_t* X, i64 xstride, float* D, i64 dstride, int M, int K, int N,   \
                  float* part, int ntiles, int early) {                                                           \
        pdl_defer();                                                                                              \
        mf_kernel<T, NN>(P, X, xstride, D, dstride, M, K, N, part, ntiles, early);                                \
    }
MMF(q4_k, T_Q4_K, 8, mmf_)
MMF(q6_k, T_Q6_K, 8, mmf_)
MMF(q4_k, T_Q4_K, 4, mmf4_)
MMF(q6_k, T_Q6_K, 4, mmf4_)
MMF(q4_k, T_Q4_K, 2, mmf2_)
MMF(q6_k, T_Q6_K, 2, mmf2_)

#define MMF_PACK(NAME, T)                                                                                         \
    extern "C" __global__ void mmf_pack_##NAME(const uint8_t* W, i64 wstride, int M, int nb, uint8_t* P) {       \
        pdl_entry();                                                                                              \
        mf_pack<T>(W, wstride, M, nb, P);                                                                         \
    }
MMF_PACK(q4_k, T_Q4_K)
MMF_PACK(q6_k, T_Q6_K)
