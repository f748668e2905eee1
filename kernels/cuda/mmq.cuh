// mmq.cuh: quantized matrix products for prefill and batched decode on the tensor cores.
// dst[i, r] = dot(w[r, :], xq[i, :]) as in matmul.cu, for Q4_K, Q6_K, Q8_0, Q5_0 and Q4_0
// weights:
// the int8 sub-block sums come from mma.sync (exact int32, as the reference's integer
// sums), then each block's float formula is that of quant.Dot.
//
// A block of 256 threads (8 warps) computes a tile of 128 weight rows x TN activation
// rows, 256 elements of K (one super-block) a step: TN = 64 (warps 4 x 2 of 32 x 32),
// or for a mixture of experts' few pairs an expert, 16 (8 x 1 of 16 x 16) or 8 (of 16 x 8). The raw blocks of each
// step are copied to shared memory with cp.async, several steps in flight; each warp
// builds its int8 fragments of a 32 x 32 sub-tile straight from the raw weight quants
// (ldmatrix for the int8 rows) and takes the scales from the raw block headers. K must be
// a multiple of 256 (Q8_0, Q5_0, Q4_0: of 128; the last step is then half zeros).
//
// Q5_0 and Q4_0 rows stay in their GGUF layout (22- and 18-byte blocks: rows of a
// multiple of 128 elements are 8-byte aligned, not 16), so their stages are copied in
// 8-byte pieces (mmq.go takes only 8-byte aligned matrices and strides) and each lane
// builds its int8 fragments of q-16 (q-8) from the raw qs and qh bytes; the activation
// side is Q8_0's.
//
// Grid: (ceil(M / 128), ceil(n / 64) * splits). With splits > 1 the steps are divided
// among the y blocks of a tile, which write partial sums part[split][n][M] that
// mmq_reduce adds in split order (deterministic); with one split they write dst.
// Dynamic shared memory: mq_stages * mq_stage_bytes (mmq.go computes the same).
#pragma once
#include "common.cuh"

#define MQ_TM 128  // weight rows a block
#define MQ_TN 64   // activation rows a block (mmq_, mmq_run_; mmq_id_ also 16 and 8)
#define MQ_NT 256  // threads
#define MQ_XLD 272  // activation quants row: 256 bytes padded for conflict-free ldmatrix

// Bytes of one weight row of a stage: Q4_K the 144-byte block; Q6_K ql 128 | qh 64 |
// scales 16 | the 16 bytes holding d, padded to 240 (conflict-free 4-byte reads of eight
// rows); Q8_0 qs 256 | the 8 f16 scales (272, as MQ_XLD for ldmatrix); Q5_0 and Q4_0
// the 8 raw blocks (176 and 144 bytes: 44 and 36 words, conflict-free 4-byte reads of
// eight rows).
template <int T>
__host__ __device__ constexpr int mq_wld() {
    return T == T_Q4_K ? 144 : T == T_Q6_K ? 240 : T == T_Q5_0 ? 176 : T == T_Q4_0 ? 144 : 272;
}
// mq_legacy: Q5_0 and Q4_0, raw 32-element blocks of mq_bb bytes against Q8_0 activations.
template <int T>
__host__ __device__ constexpr bool mq_legacy() { return T == T_Q5_0 || T == T_Q4_0; }
template <int T>
__host__ __device__ constexpr int mq_bb() { return T == T_Q5_0 ? 22 : 18; }
// Bytes of one activation row's extra data: Q8_K the 16 bytes holding d, and for Q4_K
// weights the step's 16 bsums (64 bytes: the mins' sums); Q8_0 (the partner of Q8_0,
// Q5_0 and Q4_0 weights) the 8 float scales.
template <int T>
__host__ __device__ constexpr int mq_xex() { return T == T_Q8_0 || mq_legacy<T>() ? 32 : T == T_Q4_K ? 80 : 16; }
template <int T, int TN = MQ_TN>
__host__ __device__ constexpr int mq_stage_bytes() { return MQ_TM * mq_wld<T>() + TN * (MQ_XLD + mq_xex<T>()); }
// mq_stages: the steps in flight, 3, or 2 for the narrow tiles of types whose 3 stages
// would not let two blocks share an SM (Q6_K, Q8_0: 240- and 272-byte rows); mmq.go's
// mmqStagesFor says the same.
template <int T, int TN>
__host__ __device__ constexpr int mq_stages() { return TN < MQ_TN && mq_wld<T>() >= 240 ? 2 : 3; }
// A tile of TN columns: each warp computes MI x NI fragments (16 x 8 each), the warps
// MQ_TM / (16 MI) along M and TN / (8 NI) along N.
template <int TN>
__host__ __device__ constexpr int mq_ni() { return TN >= 32 ? 4 : TN / 8; }
template <int TN>
__host__ __device__ constexpr int mq_wn() { return TN / (8 * mq_ni<TN>()); }
template <int TN>
__host__ __device__ constexpr int mq_mi() { return MQ_TM / 16 / (8 / mq_wn<TN>()); }

__device__ __forceinline__ void mma_k32(int* c, const uint32_t* a, uint32_t b0, uint32_t b1) {
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ void mma_k16(int* c, uint32_t a0, uint32_t a1, uint32_t b0) {
    asm("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
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
// ldsm_x2: two matrices, row addresses from lanes 0..15.
__device__ __forceinline__ void ldsm_x2(uint32_t* r, const void* p) {
    const uint32_t a = (uint32_t)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(a));
}

// cp16 copies 16 bytes from global to shared memory asynchronously, or writes zeros when
// !ok (src must still be a valid address).
__device__ __forceinline__ void cp16(void* dst, const void* src, bool ok) {
    const uint32_t d = (uint32_t)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src), "r"(ok ? 16 : 0) : "memory");
}
// cp8 is cp16 for 8 bytes (8-byte aligned src and dst).
__device__ __forceinline__ void cp8(void* dst, const void* src, bool ok) {
    const uint32_t d = (uint32_t)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(d), "l"(src), "r"(ok ? 8 : 0) : "memory");
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }

__device__ __forceinline__ uint32_t lds32(const uint8_t* p) { return *(const uint32_t*)p; }
// lds32h reads 4 bytes at a 2-byte aligned address.
__device__ __forceinline__ uint32_t lds32h(const uint8_t* p) {
    return (uint32_t)((const uint16_t*)p)[0] | (uint32_t)((const uint16_t*)p)[1] << 16;
}
// q5_bits puts bits 0..3 of x at bit 4 of bytes 0..3 (the fifth bits of four Q5_0
// quants): the four shifted copies x, x<<7, x<<14, x<<21 do not overlap.
__device__ __forceinline__ uint32_t q5_bits(uint32_t x) { return (((x & 0xf) * 0x00204081u) & 0x01010101u) << 4; }
// sc8 is signed byte k of w.
__device__ __forceinline__ int sc8(uint32_t w, int k) { return (int)(int8_t)(uint8_t)(w >> (8 * k)); }

// MqCols are the activation rows of a block's tile: rows col0-xsub .. of X and col0 ..
// col0+n-1 of dst, or with map (a mixture of experts' pairs grouped by expert) map[col0+c]/xdiv of X
// and map[col0+c] of dst.
struct MqCols {
    int col0, n;
    const int* map;
    int xdiv;
    int xsub;  // without map: activation row col0+c-xsub (a run of products of the same rows)
    __device__ __forceinline__ int x(int c) const { return map ? map[col0 + c] / xdiv : col0 + c - xsub; }
    __device__ __forceinline__ int out(int c) const { return map ? map[col0 + c] : col0 + c; }
};

// mq_issue starts the copies of step `step` into stage buffer st. Past K (a Q8_0 row
// whose length is not a whole number of steps) the copies write zeros.
template <int T, int TN>
__device__ __forceinline__ void mq_issue(uint8_t* st, const uint8_t* W, i64 wstride, int M, const uint8_t* X,
                                         i64 xstride, const MqCols& cols, int K, int row0, int step) {
    const int nb = K / 256;
    constexpr int WLD = mq_wld<T>();
    if (mq_legacy<T>()) {
        // The step's 8 blocks of each row, BB 8-byte pieces; zeros past the row's K/32
        // blocks (a row's bytes are a multiple of 8: K is a multiple of 128).
        constexpr int BB = mq_bb<T>();
        const int rowbytes = K / 32 * BB;
        for (int i = threadIdx.x; i < MQ_TM * BB; i += MQ_NT) {
            const int row = i / BB, pc = i % BB, off = 8 * BB * step + 8 * pc;
            const bool ok = row0 + row < M && off < rowbytes;
            cp8(st + row * WLD + 8 * pc, ok ? W + (i64)(row0 + row) * wstride + off : W, ok);
        }
    }
    constexpr int WCH = T == T_Q4_K ? 9 : T == T_Q6_K ? 14 : 17;  // 16-byte chunks a row
    for (int i = threadIdx.x; i < (mq_legacy<T>() ? 0 : MQ_TM * WCH); i += MQ_NT) {
        const int row = i / WCH, ch = i % WCH;
        bool ok = row0 + row < M;
        const uint8_t* wr = W + (i64)(ok ? row0 + row : 0) * wstride;
        const uint8_t* src;
        if (T == T_Q4_K) {
            src = wr + 144 * step + 16 * ch;
        } else if (T == T_Q6_K) {
            if (ch < 8)
                src = wr + 128 * step + 16 * ch;
            else if (ch < 12)
                src = wr + 128 * nb + 64 * step + 16 * (ch - 8);
            else if (ch == 12)
                src = wr + 192 * nb + 16 * step;
            else
                src = wr + 208 * nb + 16 * (step / 8);  // the chunk holding d[step]
        } else {
            src = ch < 16 ? wr + 256 * step + 16 * ch : wr + K + 16 * step;
            if (ch < 16 && 256 * step + 16 * ch >= K) src = W, ok = false;
        }
        cp16(st + row * WLD + 16 * ch, src, ok);
    }
    uint8_t* xq = st + MQ_TM * WLD;
    uint8_t* xe = xq + TN * MQ_XLD;
    constexpr int XEX = mq_xex<T>(), XCH = 16 + XEX / 16;
    for (int i = threadIdx.x; i < TN * XCH; i += MQ_NT) {
        const int col = i / XCH, ch = i % XCH;
        bool ok = col < cols.n;
        const uint8_t* xr = X + (i64)(ok ? cols.x(col) : 0) * xstride;
        if (ch < 16) {
            cp16(xq + col * MQ_XLD + 16 * ch, xr + 256 * step + 16 * ch, ok && 256 * step + 16 * ch < K);
            continue;
        }
        const int e = ch - 16;
        const uint8_t* src;
        if (T == T_Q8_0 || mq_legacy<T>())
            src = xr + K + 32 * step + 16 * e, ok = ok && 8 * step + 4 * e < K / 32;
        else if (e == 0)
            src = xr + K + 16 * (step / 4);  // the chunk holding d[step]
        else
            src = xr + Q8K_BSUMS(K) + 64 * step + 16 * (e - 1);  // Q4_K: bsums[16 step + 4(e-1) ..]
        cp16(xe + col * XEX + 16 * e, src, ok);
    }
}

// mmq computes the block's tile: weight rows row0 = blockIdx.x * MQ_TM on, activation
// rows cols, K steps [s0, s1) of split `split` (of nsplit).
template <int T, int MQ_STAGES, int TN = MQ_TN>
__device__ void mmq(const uint8_t* W, i64 wstride, const uint8_t* X, i64 xstride, float* D, i64 dstride, int M,
                    int K, const MqCols cols, float* part, int N, int split, int nsplit) {
    extern __shared__ __align__(16) uint8_t mq_raw[];
    constexpr int WLD = mq_wld<T>(), XEX = mq_xex<T>(), SB = mq_stage_bytes<T, TN>();
    constexpr int MI = mq_mi<TN>(), NI = mq_ni<TN>(), WM = 8 / mq_wn<TN>();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, tig = lane & 3;
    const int wm0 = (warp % WM) * 16 * MI, wn0 = (warp / WM) * 8 * NI;
    const int row0 = blockIdx.x * MQ_TM;
    const int nsteps = (K + 255) / 256, per = (nsteps + nsplit - 1) / nsplit;
    const int s0 = split * per, s1 = min(nsteps, s0 + per);

    float acc[MI][NI][4];
#pragma unroll
    for (int a = 0; a < MI; a++)
#pragma unroll
        for (int b = 0; b < NI; b++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[a][b][e] = 0;

    // Prologue: the first MQ_STAGES-1 steps in flight (a group each, empty past the end).
#pragma unroll
    for (int p = 0; p < MQ_STAGES - 1; p++) {
        if (s0 + p < s1) mq_issue<T, TN>(mq_raw + p * SB, W, wstride, M, X, xstride, cols, K, row0, s0 + p);
        cp_commit();
    }
    for (int step = s0; step < s1; step++) {
        const int i = step - s0;
        cp_wait<MQ_STAGES - 2>();  // step's group has landed (for this thread)
        __syncthreads();           // ... for every thread; and step-1's buffer is free
        if (step + MQ_STAGES - 1 < s1)
            mq_issue<T, TN>(mq_raw + ((i + MQ_STAGES - 1) % MQ_STAGES) * SB, W, wstride, M, X, xstride, cols, K, row0,
                        step + MQ_STAGES - 1);
        cp_commit();
        const uint8_t* st = mq_raw + (i % MQ_STAGES) * SB;
        const uint8_t* xq = st + MQ_TM * WLD;
        const uint8_t* xe = xq + TN * MQ_XLD;

        int isum[MI][NI][4];
#pragma unroll
        for (int a = 0; a < MI; a++)
#pragma unroll
            for (int b = 0; b < NI; b++)
#pragma unroll
                for (int e = 0; e < 4; e++) isum[a][b][e] = 0;

        // B fragments of 32 elements of K (c): ldmatrix from the activation rows.
        auto loadB = [&](int c, uint32_t(&B)[NI][2]) {
            if (NI == 1) {
                ldsm_x2(B[0], xq + (wn0 + (lane & 7)) * MQ_XLD + 32 * c + 16 * ((lane >> 3) & 1));
                return;
            }
#pragma unroll
            for (int nj = 0; nj < NI / 2; nj++) {
                uint32_t r[4];
                ldsm_x4(r, xq + (wn0 + 16 * nj + (lane & 7) + 8 * (lane >> 4)) * MQ_XLD + 32 * c + 16 * ((lane >> 3) & 1));
                B[2 * nj][0] = r[0];
                B[2 * nj][1] = r[1];
                B[(2 * nj + 1) % NI][0] = r[2];
                B[(2 * nj + 1) % NI][1] = r[3];
            }
        };

        if (T == T_Q4_K) {
            // Scales and mins of this lane's rows (mi, h): getScaleMinK4 of header bytes
            // 4..15, a byte each, sub-blocks 0-3 in word 0 and 4-7 in word 1.
            uint32_t scw[MI][2][2], mw[MI][2][2];
#pragma unroll
            for (int mi = 0; mi < MI; mi++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const uint8_t* wrow = st + (wm0 + 16 * mi + g + 8 * h) * WLD;
                    const uint32_t q0 = lds32(wrow + 4), q1 = lds32(wrow + 8), q2 = lds32(wrow + 12);
                    scw[mi][h][0] = q0 & 0x3f3f3f3f;
                    scw[mi][h][1] = (q2 & 0x0f0f0f0f) | (((q0 >> 6) & 0x03030303) << 4);
                    mw[mi][h][0] = q1 & 0x3f3f3f3f;
                    mw[mi][h][1] = ((q2 >> 4) & 0x0f0f0f0f) | (((q1 >> 6) & 0x03030303) << 4);
                }
            // mins[row][col] = sum_j m_j * (sum of x over sub-block j), one f16 mma a step:
            // k = j and 8 + j take m_j against the sub-block sum's low six bits (x & 63) and
            // the rest (x - (x & 63), a multiple of 64 within +-4096): both exact in f16,
            // every product and partial sum an integer below 2^21, so exact in f32 (the
            // reference's integer bsums sum). a0 = a2 (row g) and a1 = a3 (row g+8) hold
            // m of sub-blocks 2tig, 2tig+1.
            float mins[MI][NI][4];
            {
                uint32_t am[MI][4];
#pragma unroll
                for (int mi = 0; mi < MI; mi++)
#pragma unroll
                    for (int h = 0; h < 2; h++) {
                        const uint32_t wv = ((tig >> 1) ? mw[mi][h][1] : mw[mi][h][0]) >> (16 * (tig & 1));
                        am[mi][h] = am[mi][h + 2] = h2pack(i2h(wv & 0xff), i2h((wv >> 8) & 0xff));
                    }
#pragma unroll
                for (int ni = 0; ni < NI; ni++) {
                    const int4 bs = *(const int4*)(xe + (wn0 + 8 * ni + g) * XEX + 16 + 16 * tig);
                    const int x0 = bs.x + bs.y, x1 = bs.z + bs.w, l0 = x0 & 63, l1 = x1 & 63;
                    const uint32_t b0 = h2pack(i2h(l0), i2h(l1)), b1 = h2pack(i2h(x0 - l0), i2h(x1 - l1));
#pragma unroll
                    for (int mi = 0; mi < MI; mi++) {
#pragma unroll
                        for (int e = 0; e < 4; e++) mins[mi][ni][e] = 0;
                        tc_mma(mins[mi][ni], am[mi], b0, b1);
                    }
                }
            }
#pragma unroll
            for (int j = 0; j < 4; j++) {  // sub-blocks 2j (low nibbles) and 2j+1 (high) of qs[32j, 32j+32)
                uint32_t w[MI][4];
#pragma unroll
                for (int mi = 0; mi < MI; mi++) {
                    const uint8_t* ra = st + (wm0 + 16 * mi + g) * WLD + 16 + 32 * j + 4 * tig;
                    w[mi][0] = lds32(ra);
                    w[mi][1] = lds32(ra + 8 * WLD);
                    w[mi][2] = lds32(ra + 16);
                    w[mi][3] = lds32(ra + 8 * WLD + 16);
                }
#pragma unroll
                for (int hi = 0; hi < 2; hi++) {
                    const int c = 2 * j + hi;
                    uint32_t B[NI][2];
                    loadB(c, B);
#pragma unroll
                    for (int mi = 0; mi < MI; mi++) {
                        uint32_t A[4];
#pragma unroll
                        for (int k = 0; k < 4; k++) A[k] = (w[mi][k] >> (4 * hi)) & 0x0f0f0f0f;
                        const int sa = sc8(scw[mi][0][c >> 2], c & 3), sb = sc8(scw[mi][1][c >> 2], c & 3);
#pragma unroll
                        for (int ni = 0; ni < NI; ni++) {
                            int C[4] = {0, 0, 0, 0};
                            mma_k32(C, A, B[ni][0], B[ni][1]);
                            isum[mi][ni][0] += sa * C[0];
                            isum[mi][ni][1] += sa * C[1];
                            isum[mi][ni][2] += sb * C[2];
                            isum[mi][ni][3] += sb * C[3];
                        }
                    }
                }
            }
            // Block formula: d*yd*isum - dmin*yd*mins.
#pragma unroll
            for (int mi = 0; mi < MI; mi++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const uint32_t dd = lds32(st + (wm0 + 16 * mi + g + 8 * h) * WLD);
                    const float d = h2f(dd & 0xffff), dmin = h2f(dd >> 16);
#pragma unroll
                    for (int ni = 0; ni < NI; ni++)
#pragma unroll
                        for (int o = 0; o < 2; o++) {
                            const float yd = ((const float*)(xe + (wn0 + 8 * ni + 2 * tig + o) * XEX))[step & 3];
                            const int e = 2 * h + o;
                            acc[mi][ni][e] += d * yd * (float)isum[mi][ni][e] - dmin * yd * mins[mi][ni][e];
                        }
                }
        } else if (T == T_Q6_K) {
#pragma unroll
            for (int hh = 0; hh < 2; hh++) {  // the 128-element halves
                // This lane's words of rows g and g+8: elements 4tig.. and 16+4tig.. of each
                // 32-element group of the half.
                uint32_t qh[MI][4], ql[MI][2][4];
#pragma unroll
                for (int mi = 0; mi < MI; mi++) {
                    const uint8_t* r = st + (wm0 + 16 * mi + g) * WLD;
                    qh[mi][0] = lds32(r + 128 + 32 * hh + 4 * tig);
                    qh[mi][1] = lds32(r + 8 * WLD + 128 + 32 * hh + 4 * tig);
                    qh[mi][2] = lds32(r + 128 + 32 * hh + 16 + 4 * tig);
                    qh[mi][3] = lds32(r + 8 * WLD + 128 + 32 * hh + 16 + 4 * tig);
#pragma unroll
                    for (int s2 = 0; s2 < 2; s2++) {
                        const int o = 64 * hh + 32 * s2 + 4 * tig;
                        ql[mi][s2][0] = lds32(r + o);
                        ql[mi][s2][1] = lds32(r + 8 * WLD + o);
                        ql[mi][s2][2] = lds32(r + o + 16);
                        ql[mi][s2][3] = lds32(r + 8 * WLD + o + 16);
                    }
                }
#pragma unroll
                for (int s = 0; s < 4; s++) {  // 32-element group c = 4hh + s
                    const int c = 4 * hh + s;
                    uint32_t B[NI][2];
                    loadB(c, B);
#pragma unroll
                    for (int mi = 0; mi < MI; mi++) {
                        uint32_t A[4];
#pragma unroll
                        for (int k = 0; k < 4; k++)
                            A[k] = __vsub4(((ql[mi][s & 1][k] >> (4 * (s >> 1))) & 0x0f0f0f0f) |
                                               (((qh[mi][k] >> (2 * s)) & 0x03030303) << 4),
                                           0x20202020);
                        const uint8_t* sr = st + (wm0 + 16 * mi + g) * WLD + 192 + 2 * c;
                        const int sa0 = (int)(int8_t)sr[0], sa1 = (int)(int8_t)sr[1];
                        const int sb0 = (int)(int8_t)sr[8 * WLD], sb1 = (int)(int8_t)sr[8 * WLD + 1];
#pragma unroll
                        for (int ni = 0; ni < NI; ni++) {
                            int C0[4] = {0, 0, 0, 0}, C1[4] = {0, 0, 0, 0};
                            mma_k16(C0, A[0], A[1], B[ni][0]);
                            mma_k16(C1, A[2], A[3], B[ni][1]);
                            isum[mi][ni][0] += sa0 * C0[0] + sa1 * C1[0];
                            isum[mi][ni][1] += sa0 * C0[1] + sa1 * C1[1];
                            isum[mi][ni][2] += sb0 * C0[2] + sb1 * C1[2];
                            isum[mi][ni][3] += sb0 * C0[3] + sb1 * C1[3];
                        }
                    }
                }
            }
#pragma unroll
            for (int mi = 0; mi < MI; mi++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const uint8_t* wrow = st + (wm0 + 16 * mi + g + 8 * h) * WLD;
                    const float d = h2f(*(const uint16_t*)(wrow + 208 + 2 * (step & 7)));
#pragma unroll
                    for (int ni = 0; ni < NI; ni++)
#pragma unroll
                        for (int o = 0; o < 2; o++) {
                            const int col = wn0 + 8 * ni + 2 * tig + o;
                            const float yd = ((const float*)(xe + col * XEX))[step & 3];
                            const int e = 2 * h + o;
                            acc[mi][ni][e] += d * yd * (float)isum[mi][ni][e];
                        }
                }
        } else if (mq_legacy<T>()) {
            // Q5_0 / Q4_0: lane (g, tig)'s fragment words of a block row are the low and
            // the high nibbles of qs[4tig..4tig+3] (elements 4tig.. and 16+4tig..), with
            // Q5_0's fifth bits 4tig.. and 16+4tig.. of qh; then a float product per
            // block as Q8_0's. Odd blocks' qh and qs are 4-byte aligned, even ones' 2. A
            // half step (past K: zeros) stops after its 4 blocks (attn_k_b's K of 128).
            constexpr int BB = mq_bb<T>(), QS = T == T_Q5_0 ? 6 : 2;
            const int cend = min(8, K / 32 - 8 * step);
#pragma unroll 1
            for (int c2 = 0; c2 < cend; c2 += 2)
#pragma unroll
                for (int par = 0; par < 2; par++) {
                    const int c = c2 + par;
                    uint32_t A[MI][4], B[NI][2];
                    float wd[MI][2], xd[NI][2];
#pragma unroll
                    for (int mi = 0; mi < MI; mi++)
#pragma unroll
                        for (int h = 0; h < 2; h++) {
                            const uint8_t* blk = st + (wm0 + 16 * mi + g + 8 * h) * WLD + BB * c;
                            const uint32_t q = par ? lds32(blk + QS + 4 * tig) : lds32h(blk + QS + 4 * tig);
                            uint32_t lo = q & 0x0f0f0f0f, hi = (q >> 4) & 0x0f0f0f0f;
                            if (T == T_Q5_0) {
                                const uint32_t qh = par ? lds32(blk + 2) : lds32h(blk + 2);
                                lo = __vsub4(lo | q5_bits(qh >> (4 * tig)), 0x10101010);
                                hi = __vsub4(hi | q5_bits(qh >> (16 + 4 * tig)), 0x10101010);
                            } else {
                                lo = __vsub4(lo, 0x08080808);
                                hi = __vsub4(hi, 0x08080808);
                            }
                            A[mi][h] = lo;  // a0 (row g) / a1 (row g+8): k 4tig..4tig+3
                            A[mi][h + 2] = hi;  // a2 / a3: k 16+4tig..
                            wd[mi][h] = h2f(*(const uint16_t*)blk);
                        }
                    loadB(c, B);
#pragma unroll
                    for (int ni = 0; ni < NI; ni++)
#pragma unroll
                        for (int o = 0; o < 2; o++)
                            xd[ni][o] = ((const float*)(xe + (wn0 + 8 * ni + 2 * tig + o) * XEX))[c];
#pragma unroll
                    for (int mi = 0; mi < MI; mi++)
#pragma unroll
                        for (int ni = 0; ni < NI; ni++) {
                            int C[4] = {0, 0, 0, 0};
                            mma_k32(C, A[mi], B[ni][0], B[ni][1]);
#pragma unroll
                            for (int e = 0; e < 4; e++)
                                acc[mi][ni][e] += (float)C[e] * (wd[mi][e >> 1] * xd[ni][e & 1]);
                        }
                }
        } else {  // Q8_0: ldmatrix from the int8 rows; a float product per 32-element block
#pragma unroll 2
            for (int c = 0; c < 8; c++) {
                uint32_t A[MI][4], B[NI][2];
#pragma unroll
                for (int mi = 0; mi < MI; mi++)
                    ldsm_x4(A[mi], st + (wm0 + 16 * mi + (lane & 15)) * WLD + 32 * c + 16 * (lane >> 4));
                loadB(c, B);
                float wd[MI][2], xd[NI][2];
#pragma unroll
                for (int mi = 0; mi < MI; mi++)
#pragma unroll
                    for (int h = 0; h < 2; h++)
                        wd[mi][h] = h2f(*(const uint16_t*)(st + (wm0 + 16 * mi + g + 8 * h) * WLD + 256 + 2 * c));
#pragma unroll
                for (int ni = 0; ni < NI; ni++)
#pragma unroll
                    for (int o = 0; o < 2; o++) xd[ni][o] = ((const float*)(xe + (wn0 + 8 * ni + 2 * tig + o) * XEX))[c];
#pragma unroll
                for (int mi = 0; mi < MI; mi++)
#pragma unroll
                    for (int ni = 0; ni < NI; ni++) {
                        int C[4] = {0, 0, 0, 0};
                        mma_k32(C, A[mi], B[ni][0], B[ni][1]);
#pragma unroll
                        for (int e = 0; e < 4; e++) acc[mi][ni][e] += (float)C[e] * (wd[mi][e >> 1] * xd[ni][e & 1]);
                    }
            }
        }
    }
    cp_wait<0>();
    float* out = D;
    i64 ostride = dstride;
    if (nsplit > 1) {
        out = part + (i64)split * N * M;
        ostride = M;
    }
#pragma unroll
    for (int mi = 0; mi < MI; mi++)
#pragma unroll
        for (int ni = 0; ni < NI; ni++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int r = row0 + wm0 + 16 * mi + g + 8 * (e >> 1);
                const int c = wn0 + 8 * ni + 2 * tig + (e & 1);
                if (r < M && c < cols.n) out[(i64)cols.out(c) * ostride + r] = acc[mi][ni][e];
            }
}

