// mmf.cu: Q4_K and Q6_K matrix products on the f16 tensor cores for batches of decode
// rows (33 to a few hundred activation rows), where mmq's int8 path spends most of its
// instructions on per-sub-block integer scales and holds one block an SM.
//
// dst[i, r] = dot(w[r, :], x[i, :]): each weight is dequantized in registers to f16
// (Q4_K: q * f16(d*sc) - f16(dmin*m) in one f16 fma; Q6_K: (q - 32) * f16(d*sc)), the
// activation rows are the reference's Q8_K values d*q rounded to f16 (act_f16p, as
// cuBLASLt's products see them), and mma.sync m16n8k16 sums in f32 over all of K.
//
// A block of 256 threads (8 warps, 4 x 2 of 32 x 32) computes 128 weight rows x 64
// activation rows, 256 elements of K (one super-block) a step, two steps in flight by
// cp.async: the raw weight rows as mmq stages them, the f16 activation rows (MF_XLD
// bytes each), and then each row's sub-block scales made f16 into a table.
//
// The activation rows are stored with each 16-element group permuted (act_f16p: element
// 4t+2a+b at 2t+a+8b), so that the k slots of a lane's mma fragment are four consecutive
// quants of a row: one 32-bit word of Q4_K qs (or Q6_K ql and qh) gives a lane its A
// fragment halves of two 16-element groups (low and high nibbles).
//
// Grid (ceil(M/128), ceil(n/64) * splits): with splits > 1 the steps are divided among
// the y blocks of a tile, which write partial sums part[split][n][M] for mmq_reduce.
// Dynamic shared memory: mf_smem<T>().
#include "common.cuh"

#define MF_TM 128
#define MF_TN 64
#define MF_NT 256
#define MF_XLD 528  // an activation row: 256 halves and 16 bytes of padding (conflict-free ldmatrix)

template <int T>
__host__ __device__ constexpr int mf_wld() { return T == T_Q4_K ? 144 : 240; }
template <int T>
__host__ __device__ constexpr int mf_stage() { return MF_TM * mf_wld<T>() + MF_TN * MF_XLD; }
// The scale table: per row 8 (Q4_K: uint2 of half2 (dsc, dsc), (-dmm, -dmm) per 32) or
// 16 (Q6_K: half2 (dsc, dsc) per 16) entries, rows MF_TLD bytes apart (eight rows' reads
// of one entry fall in distinct banks).
#define MF_TLD 72
template <int T>
__host__ __device__ constexpr int mf_table() { return MF_TM * MF_TLD; }
template <int T>
__host__ __device__ constexpr int mf_smem() { return 2 * mf_stage<T>() + mf_table<T>(); }

__device__ __forceinline__ uint32_t mf_lds(const uint8_t* p) { return *(const uint32_t*)p; }
__device__ __forceinline__ uint32_t hsub2u(uint32_t a, uint32_t b) {
    uint32_t r;
    asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
__device__ __forceinline__ uint32_t hmul2u(uint32_t a, uint32_t b) {
    uint32_t r;
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
__device__ __forceinline__ uint32_t hfma2u(uint32_t a, uint32_t b, uint32_t c) {
    uint32_t r;
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
}
// mf_h2: the halves 1024 + v of bytes 0 and 2 of x masked by m (v below 2048).
__device__ __forceinline__ uint32_t mf_h2(uint32_t x, uint32_t m) { return (x & m) | 0x64006400u; }

// mf_issue starts the copies of step `step` (weights as mmq's mq_issue lays them out,
// then the activation rows col0.. of X, zeros past n) into stage buffer st.
template <int T>
__device__ __forceinline__ void mf_issue(uint8_t* st, const uint8_t* W, i64 wstride, int M, const uint8_t* X,
                                         i64 xstride, int col0, int n, int K, int row0, int step) {
    const int nb = K / 256;
    constexpr int WLD = mf_wld<T>(), WCH = T == T_Q4_K ? 9 : 14;
    for (int i = threadIdx.x; i < MF_TM * WCH; i += MF_NT) {
        const int row = i / WCH, ch = i % WCH;
        const bool ok = row0 + row < M;
        const uint8_t* wr = W + (i64)(ok ? row0 + row : 0) * wstride;
        const uint8_t* src;
        if (T == T_Q4_K)
            src = wr + 144 * step + 16 * ch;
        else if (ch < 8)
            src = wr + 128 * step + 16 * ch;
        else if (ch < 12)
            src = wr + 128 * nb + 64 * step + 16 * (ch - 8);
        else if (ch == 12)
            src = wr + 192 * nb + 16 * step;
        else
            src = wr + 208 * nb + 16 * (step / 8);  // the chunk holding d[step]
        tc_cp16(st + row * WLD + 16 * ch, src, ok);
    }
    uint8_t* xs = st + MF_TM * WLD;
    for (int i = threadIdx.x; i < MF_TN * 32; i += MF_NT) {
        const int col = i / 32, ch = i % 32;
        const bool ok = col0 + col < n;
        tc_cp16(xs + col * MF_XLD + 16 * ch, X + (i64)(ok ? col0 + col : 0) * xstride + 512 * step + 16 * ch, ok);
    }
}

// mf_scales fills the table from the stage's weight rows: two threads a row.
template <int T>
__device__ __forceinline__ void mf_scales(uint8_t* tab, const uint8_t* st, int step) {
    const int row = threadIdx.x >> 1, half = threadIdx.x & 1;
    const uint8_t* wr = st + row * mf_wld<T>();
    if (T == T_Q4_K) {
        const float d = ldh(wr), dmin = ldh(wr + 2);
        uint2* out = (uint2*)(tab + row * MF_TLD);
#pragma unroll
        for (int j = 4 * half; j < 4 * half + 4; j++) {
            int sc, m;
            scale_min_k4(j, wr + 4, &sc, &m);
            const uint32_t a = f2h(__fmul_rn(d, (float)sc)), b = f2h(-__fmul_rn(dmin, (float)m));
            out[j] = make_uint2(a | a << 16, b | b << 16);
        }
    } else {
        const float d = h2f(*(const uint16_t*)(wr + 208 + 2 * (step & 7)));
        uint32_t* out = (uint32_t*)(tab + row * MF_TLD);
#pragma unroll
        for (int j = 8 * half; j < 8 * half + 8; j++) {
            const uint32_t a = f2h(__fmul_rn(d, (float)(int)(int8_t)wr[192 + j]));
            out[j] = a | a << 16;
        }
    }
}

template <int T>
__device__ void mmf(const uint8_t* W, i64 wstride, const uint8_t* X, i64 xstride, float* D, i64 dstride, int M,
                    int K, int n, float* part, int split, int nsplit, int col0) {
    extern __shared__ __align__(16) uint8_t mf_raw[];
    constexpr int WLD = mf_wld<T>(), SB = mf_stage<T>();
    uint8_t* tab = mf_raw + 2 * SB;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, tig = lane & 3;
    const int wm0 = (warp & 3) * 32, wn0 = (warp >> 2) * 32;
    const int row0 = blockIdx.x * MF_TM;
    const int nsteps = K / 256, per = (nsteps + nsplit - 1) / nsplit;
    const int s0 = split * per, s1 = min(nsteps, s0 + per);

    float acc[2][4][4];
#pragma unroll
    for (int a = 0; a < 2; a++)
#pragma unroll
        for (int b = 0; b < 4; b++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[a][b][e] = 0;

    if (s0 < s1) mf_issue<T>(mf_raw, W, wstride, M, X, xstride, col0, n, K, row0, s0);
    tc_commit();
    for (int step = s0; step < s1; step++) {
        const int i = step - s0;
        if (step + 1 < s1) mf_issue<T>(mf_raw + ((i + 1) & 1) * SB, W, wstride, M, X, xstride, col0, n, K, row0, step + 1);
        tc_commit();
        tc_wait1();  // this step's group has landed (for this thread)
        __syncthreads();
        const uint8_t* st = mf_raw + (i & 1) * SB;
        const uint8_t* xs = st + MF_TM * WLD;
        mf_scales<T>(tab, st, step);
        __syncthreads();

        // B fragments of 16-element group G: ldmatrix from the activation rows.
        auto loadB = [&](int G, uint32_t(&B)[4][2]) {
#pragma unroll
            for (int nj = 0; nj < 2; nj++) {
                uint32_t r[4];
                tc_ldsm(r, xs + (wn0 + 16 * nj + (lane & 7) + 8 * (lane >> 4)) * MF_XLD + 32 * G + 16 * ((lane >> 3) & 1));
                B[2 * nj][0] = r[0];
                B[2 * nj][1] = r[1];
                B[2 * nj + 1][0] = r[2];
                B[2 * nj + 1][1] = r[3];
            }
        };
        // mma of A (rows g, g+8 of sub-tile mi) against the group's B fragments.
        auto mmaRow = [&](int mi, const uint32_t* A, const uint32_t(&B)[4][2]) {
#pragma unroll
            for (int ni = 0; ni < 4; ni++) tc_mma(acc[mi][ni], A, B[ni][0], B[ni][1]);
        };

        if (T == T_Q4_K) {
#pragma unroll
            for (int j = 0; j < 4; j++) {  // qs[32j, 32j+32): sub-blocks 2j (low nibbles), 2j+1 (high)
                uint2 s[2][2][2];  // [mi][h][lo/hi]: (dsc2, -dmm2)
#pragma unroll
                for (int mi = 0; mi < 2; mi++)
#pragma unroll
                    for (int h = 0; h < 2; h++) {
                        const uint2* t = (const uint2*)(tab + (wm0 + 16 * mi + g + 8 * h) * MF_TLD);
                        s[mi][h][0] = t[2 * j];
                        s[mi][h][1] = t[2 * j + 1];
                    }
#pragma unroll
                for (int p = 0; p < 2; p++) {  // bytes 16p.. of the 32: groups 4j+p (low) and 4j+2+p (high)
                    uint32_t u[2][2];
#pragma unroll
                    for (int mi = 0; mi < 2; mi++)
#pragma unroll
                        for (int h = 0; h < 2; h++)
                            u[mi][h] = mf_lds(st + (wm0 + 16 * mi + g + 8 * h) * WLD + 16 + 32 * j + 16 * p + 4 * tig);
#pragma unroll
                    for (int hi = 0; hi < 2; hi++) {
                        uint32_t B[4][2];
                        loadB(4 * j + 2 * hi + p, B);
#pragma unroll
                        for (int mi = 0; mi < 2; mi++) {
                            uint32_t A[4];
#pragma unroll
                            for (int h = 0; h < 2; h++) {
                                const uint32_t x = u[mi][h] >> (4 * hi);
                                const uint2 sc = s[mi][h][hi];
                                A[h] = hfma2u(hsub2u(mf_h2(x, 0x000f000fu), 0x64006400u), sc.x, sc.y);
                                A[h + 2] = hfma2u(hsub2u(mf_h2(x >> 8, 0x000f000fu), 0x64006400u), sc.x, sc.y);
                            }
                            mmaRow(mi, A, B);
                        }
                    }
                }
            }
        } else {  // Q6_K: group G = 8hh + 2s + par, its quants ql[64hh + 32(s%2) + 16par ..] (nibble s/2), qh[32hh + 16par ..] (bits 2s)
#pragma unroll
            for (int hh = 0; hh < 2; hh++)
#pragma unroll
                for (int par = 0; par < 2; par++) {
                    uint32_t qa[2][2], qb[2][2], qh[2][2];
#pragma unroll
                    for (int mi = 0; mi < 2; mi++)
#pragma unroll
                        for (int h = 0; h < 2; h++) {
                            const uint8_t* r = st + (wm0 + 16 * mi + g + 8 * h) * WLD;
                            qa[mi][h] = mf_lds(r + 64 * hh + 16 * par + 4 * tig);
                            qb[mi][h] = mf_lds(r + 64 * hh + 32 + 16 * par + 4 * tig);
                            qh[mi][h] = mf_lds(r + 128 + 32 * hh + 16 * par + 4 * tig);
                        }
#pragma unroll
                    for (int s = 0; s < 4; s++) {
                        const int G = 8 * hh + 2 * s + par;
                        uint32_t B[4][2];
                        loadB(G, B);
#pragma unroll
                        for (int mi = 0; mi < 2; mi++) {
                            uint32_t A[4];
#pragma unroll
                            for (int h = 0; h < 2; h++) {
                                const uint32_t ql = (s & 1) ? qb[mi][h] : qa[mi][h];
                                const uint32_t q = ((ql >> (4 * (s >> 1))) & 0x0f0f0f0fu) | (((qh[mi][h] >> (2 * s)) & 0x03030303u) << 4);
                                const uint32_t dsc = *(const uint32_t*)(tab + (wm0 + 16 * mi + g + 8 * h) * MF_TLD + 4 * G);
                                A[h] = hmul2u(hsub2u(mf_h2(q, 0x00ff00ffu), 0x64206420u), dsc);
                                A[h + 2] = hmul2u(hsub2u(mf_h2(q >> 8, 0x00ff00ffu), 0x64206420u), dsc);
                            }
                            mmaRow(mi, A, B);
                        }
                    }
                }
        }
        __syncthreads();  // the table and this stage are rewritten next step
    }
    asm volatile("cp.async.wait_all;" ::: "memory");
    float* out = D;
    i64 ostride = dstride;
    if (nsplit > 1) {
        out = part + (i64)split * n * M;
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
                if (r < M && c < n) out[(i64)c * ostride + r] = acc[mi][ni][e];
            }
}

// mmf_*: dst = w x^T for n activation rows (act_f16p's f16 rows, xstride bytes apart);
// grid (ceil(M/128), ntile * splits), ntile = ceil(n/64).
#define MMF(NAME, T)                                                                                                  \
    extern "C" __global__ void __launch_bounds__(MF_NT, 2)                                                            \
        mmf_##NAME(const uint8_t* W, i64 wstride, const uint8_t* X, i64 xstride, float* D, i64 dstride, int M, int K, \
                   int n, float* part, int ntile) {                                                                   \
        pdl_entry();                                                                                                  \
        mmf<T>(W, wstride, X, xstride, D, dstride, M, K, n, part, blockIdx.y / ntile, gridDim.y / ntile,              \
               (blockIdx.y % ntile) * MF_TN);                                                                         \
    }
MMF(q4_k, T_Q4_K)
MMF(q6_k, T_Q6_K)

// act_f16p writes Q8_K activation rows (int8 quants then f32 scales, istride bytes
// apart) as f16 rows of d*q for mmf, each 16-element group permuted (element 4t+2a+b at
// 2t+a+8b); grid (ceil(k/4096), rows), a group a thread; k % 256 == 0.
extern "C" __global__ void act_f16p(uint8_t* out, i64 ostride, const uint8_t* in, i64 istride, int k) {
    pdl_entry();
    const int e = (blockIdx.x * blockDim.x + threadIdx.x) * 16;
    if (e >= k) return;
    const uint8_t* row = in + (i64)blockIdx.y * istride;
    const float d = ((const float*)(row + k))[e / 256];
    const uint4 q = *(const uint4*)(row + e);
    const uint32_t qw[4] = {q.x, q.y, q.z, q.w};
    uint16_t h[16];
#pragma unroll
    for (int j = 0; j < 16; j++) {
        const int t = j / 4, a = (j / 2) & 1, b = j & 1;
        h[2 * t + a + 8 * b] = f2h(d * (float)(int8_t)(qw[j / 4] >> (8 * (j % 4))));
    }
    uint4 o0, o1;
    o0.x = h[0] | ((uint32_t)h[1] << 16), o0.y = h[2] | ((uint32_t)h[3] << 16);
    o0.z = h[4] | ((uint32_t)h[5] << 16), o0.w = h[6] | ((uint32_t)h[7] << 16);
    o1.x = h[8] | ((uint32_t)h[9] << 16), o1.y = h[10] | ((uint32_t)h[11] << 16);
    o1.z = h[12] | ((uint32_t)h[13] << 16), o1.w = h[14] | ((uint32_t)h[15] << 16);
    uint4* dst = (uint4*)(out + (i64)blockIdx.y * ostride + 2 * (i64)e);
    dst[0] = o0;
    dst[1] = o1;
}
