// quant.cu: the activation quantizers that MatMul runs before its dots (F32 rows to the
// dot partner layouts of common.cuh), and the ops fused with them (SwiGLU, RMSNorm, the
// residual add, GetRows: fuse.go). Strides are in elements of the tensor's type unless
// named in bytes.
#include "common.cuh"

// ---- activation quantizers: x [rows, k] F32 -> the dot partner layouts of common.cuh ----

// quant_q8_0 / quant_q8_1: one warp per 32-element block, 8 blocks per CUDA block;
// grid (ceil(nb/8), rows). s1 != 0 writes the Q8_1 sums.
extern "C" __global__ void quant_q8(uint8_t* out, i64 ostride, const float* x, int k, int s1) { pdl_entry();
    const int ib = blockIdx.x * 8 + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (ib >= k / 32) return;
    q8_quant_lane(x[(i64)blockIdx.y * k + ib * 32 + lane], out + (i64)blockIdx.y * ostride, ib, k, s1);
}

// swiglu_q8: swiglu_f32 over rows of k, then quantized to Q8_0 (s1: Q8_1) as quant_q8
// does; grid (ceil(k/256), rows), a warp a 32-element block.
extern "C" __global__ void swiglu_q8(float* dst, const float* g, const float* u, int k, uint8_t* out, i64 ostride,
                                     int s1) { pdl_entry();
    const int nb = k / 32;
    const int ib = blockIdx.x * 8 + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (ib >= nb) return;
    const i64 j = (i64)blockIdx.y * k + ib * 32 + lane;
    const float x = g[j], y = u[j];  // both loads first: the exp's branches kept u's after it
    const float e = (float)exp(-(double)x);
    const float v = x / (1.0f + e) * y;
    dst[j] = v;
    q8_quant_lane(v, out + (i64)blockIdx.y * ostride, ib, k, s1);
}

// q8k_quant: q8k_quant_in for a 256-thread block.
__device__ __forceinline__ void q8k_quant(float v, uint8_t* row, int ib, int k) {
    __shared__ float sa[8];
    __shared__ int si[8];
    __shared__ float sv[256];
    q8k_quant_in(v, row, ib, k, threadIdx.x, sa, si, sv, true);
}

// rms_norm_q8_k: rms_norm, then its output quantized to Q8_K as quant_q8_k would (the
// fused RMSNorm + MatMul activation of a layer). Grid (cols/256, rows): every block sums
// its row's squares (in the same order) and writes and quantizes its 256 elements.
extern "C" __global__ void __launch_bounds__(256) rms_norm_q8_k(float* dst, const float* x, const float* w, int cols, float eps,
                                                                uint8_t* out, i64 ostride) { pdl_entry();
    __shared__ double part[8];
    const float* in = x + (i64)blockIdx.y * cols;
    float* o = dst + (i64)blockIdx.y * cols;
    double s = 0;
#pragma unroll 8
    for (int j = threadIdx.x; j < cols; j += blockDim.x) s += (double)in[j] * (double)in[j];
    s = warp_sumd(s);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = s;
    __syncthreads();
    const float scale = rms_scale(part, 8, cols, eps);
    const int j = blockIdx.x * 256 + threadIdx.x;
    const float v = in[j] * scale * w[j];  // dst never aliases x here: the host fuses only then
    q8k_quant(v, out + (i64)blockIdx.y * ostride, blockIdx.x, cols);
    o[j] = v;
}

#define Q8KW_WARPS 4  // 256-element blocks a CUDA block of the warp-quantizing kernels

// load8 reads the eight floats at src: two 16-byte loads when src is 16-byte aligned.
__device__ __forceinline__ void load8(const float* src, float v[8]) {
    if (((uintptr_t)src & 15) == 0) {
        const float4 a = *(const float4*)src, b = *(const float4*)(src + 4);
        v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
    } else {
#pragma unroll
        for (int i = 0; i < 8; i++) v[i] = src[i];
    }
}

// quant_q8_k: rows of k (k % 256 == 0) to Q8_K, a warp a 256-element block
// (q8k_quant_warp), Q8KW_WARPS warps a CUDA block; grid (ceil(k/256/Q8KW_WARPS), rows).
// A block a 256-element block with two barriers (q8k_quant) read ~0.3 TB/s at 512 rows
// (session 19's profile: 28 us a 4,096-wide batch, 70 us a 14,336-wide one).
extern "C" __global__ void __launch_bounds__(32 * Q8KW_WARPS) quant_q8_k(uint8_t* out, i64 ostride, const float* x, int k) {
    pdl_entry();
    const int ib = blockIdx.x * Q8KW_WARPS + (int)(threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (ib >= k / 256) return;
    float v[8];
    load8(x + (i64)blockIdx.y * k + ib * 256 + 8 * lane, v);
    q8k_quant_warp(v, out + (i64)blockIdx.y * ostride, ib, k);
}

// swiglu_q8_k: swiglu_f32 over rows of k, then quantized to Q8_K; a warp a 256-element
// block (q8k_quant_warp), grid (ceil(k/256/Q8KW_WARPS), rows), Q8KW_WARPS warps.
extern "C" __global__ void __launch_bounds__(32 * Q8KW_WARPS) swiglu_q8_k(float* dst, const float* g, const float* u,
                                                                          int k, uint8_t* out, i64 ostride,
                                                                          uint16_t* hout, i64 hstride) {
    pdl_entry();
    const int ib = blockIdx.x * Q8KW_WARPS + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (ib >= k / 256) return;
    const i64 j = (i64)blockIdx.y * k + ib * 256 + 8 * lane;
    float gv[8], uv[8], v[8];
    if ((((uintptr_t)g | (uintptr_t)u | (uintptr_t)dst) & 15) == 0) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const float4 a = *(const float4*)(g + j + 4 * h), b = *(const float4*)(u + j + 4 * h);
            gv[4 * h] = a.x, gv[4 * h + 1] = a.y, gv[4 * h + 2] = a.z, gv[4 * h + 3] = a.w;
            uv[4 * h] = b.x, uv[4 * h + 1] = b.y, uv[4 * h + 2] = b.z, uv[4 * h + 3] = b.w;
        }
    } else {
#pragma unroll
        for (int i = 0; i < 8; i++) gv[i] = g[j + i], uv[i] = u[j + i];
    }
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const float e = (float)exp(-(double)gv[i]);
        v[i] = gv[i] / (1.0f + e) * uv[i];
    }
    if (((uintptr_t)dst & 15) == 0) {
        *(float4*)(dst + j) = make_float4(v[0], v[1], v[2], v[3]);
        *(float4*)(dst + j + 4) = make_float4(v[4], v[5], v[6], v[7]);
    } else {
#pragma unroll
        for (int i = 0; i < 8; i++) dst[j + i] = v[i];
    }
    q8k_quant_warp(v, out + (i64)blockIdx.y * ostride, ib, k, hout ? (uint16_t*)((uint8_t*)hout + (i64)blockIdx.y * hstride) : nullptr);
}

// get_rows_q8_k: get_rows_f32 into x (the gathered rows of gcols values laid end to end),
// then x's rows of k quantized to Q8_K as quant_q8_k does; a warp a 256-element block as
// swiglu_q8_k, grid (ceil(k/256/Q8KW_WARPS), rows of x). The table (tstride bytes a row)
// does not overlap x.
extern "C" __global__ void __launch_bounds__(32 * Q8KW_WARPS) get_rows_q8_k(float* x, const uint8_t* table, i64 tstride,
                                                                            const int* ids, int gcols, int k,
                                                                            uint8_t* out, i64 ostride) {
    pdl_entry();
    const int ib = blockIdx.x * Q8KW_WARPS + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (ib >= k / 256) return;
    const i64 e0 = (i64)blockIdx.y * k + ib * 256 + 8 * lane;
    float v[8];
    if (gcols % 8 == 0) {  // the lane's eight values lie in one gathered row: one division
        const i64 gr = e0 / gcols;
        load8((const float*)(table + (i64)ids[gr] * tstride) + (e0 - gr * gcols), v);
    } else {
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const i64 e = e0 + i, gr = e / gcols;
            v[i] = ((const float*)(table + (i64)ids[gr] * tstride))[e - gr * gcols];
        }
    }
    if (((uintptr_t)x & 15) == 0) {
        *(float4*)(x + e0) = make_float4(v[0], v[1], v[2], v[3]);
        *(float4*)(x + e0 + 4) = make_float4(v[4], v[5], v[6], v[7]);
    } else {
#pragma unroll
        for (int i = 0; i < 8; i++) x[e0 + i] = v[i];
    }
    q8k_quant_warp(v, out + (i64)blockIdx.y * ostride, ib, k);
}

#define ADD_NORM_THREADS 1024
#define ADD_NORM_PER 8  // elements of a row per thread: rows of up to 8192 (addNormMaxCols)

// q8k_quant_wide quantizes up to 16 Q8_K blocks of a row at once, as q8k_quant_in does
// each: the 64 threads of group g = t / 64 take block ib (its elements l + 64i, i < 4,
// l = t % 64, values v[i]); the largest magnitude (the first on ties, NaN never) is
// found by the two warps of the group and met in shared memory (sm: 2 floats and 2
// ints per warp, 32 warps), one barrier for all the blocks.
// With hrow, the rounded values d*q also in f16: element j at hrow[j], or with xn >= 0 as
// row xn of mmg_xl's stage layout (kernels/cuda/mmg.cu: a 256-element step of 64 rows in
// 32 KiB, row n's elements 8c..8c+7 at ((n / 8) 32 + c) 128 + (n % 8) 16 of it).
__device__ __forceinline__ void q8k_quant_wide(const float v[4], uint8_t* row, int ib, int k, bool on, float* sa,
                                               int* si, float* sx, uint16_t* hrow, int xn = -1) {
    const int t = threadIdx.x, lane = t & 31, w = t >> 5, l = t & 63;
    float a = -2.0f, x = 0.0f;
    int idx = 0;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        float m = fabsf(v[i]);
        if (m != m) m = -1.0f;
        if (m > a) { a = m; idx = l + 64 * i; x = v[i]; }
    }
    for (int o = 16; o > 0; o >>= 1) {
        const float a2 = __shfl_xor_sync(0xffffffffu, a, o), x2 = __shfl_xor_sync(0xffffffffu, x, o);
        const int i2 = __shfl_xor_sync(0xffffffffu, idx, o);
        if (q8k_first(a2, i2, a, idx)) { a = a2; idx = i2; x = x2; }
    }
    if (lane == 0) { sa[w] = a; si[w] = idx; sx[w] = x; }
    __syncthreads();
    {
        const int o = w ^ 1;  // the group's other warp
        const float a2 = sa[o], x2 = sx[o];
        const int i2 = si[o];
        if (q8k_first(a2, i2, a, idx)) { a = a2; idx = i2; x = x2; }
    }
    __syncthreads();  // the arrays may be reused by the next round
    if (!on) return;
    float* dd = (float*)(row + k);
    int* bsums = (int*)(row + Q8K_BSUMS(k));
    const float iscale = q8k_iscale(a, x), d = q8k_d(a, iscale);
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const int q = q8k_q(a, iscale, v[i]);
        row[ib * 256 + 64 * i + l] = (uint8_t)(int8_t)q;
        if (hrow) {
            const int j = 64 * i + l;  // of block ib
            const uint16_t h = f2h(d * (float)(int8_t)q);
            if (xn < 0)
                hrow[ib * 256 + j] = h;
            else
                *(uint16_t*)((uint8_t*)hrow + ib * 32768 + ((((xn >> 3) * 32 + (j >> 3)) << 7) | ((xn & 7) << 4) | ((j & 7) << 1))) = h;
        }
        int s = q;
        for (int o = 8; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if ((l & 15) == 0) bsums[ib * 16 + 4 * i + l / 16] = s;
    }
    if (l == 0) dd[ib] = d;
}

// add_rms_norm(_q8_k): add_f32 (sum = a + b, same shapes), then rms_norm of the sum into
// dst, then (q8_k) dst quantized to Q8_K as quant_q8_k would: the residual add and the
// next layer's norm (and its MatMul's rounding) in one launch, with the results of the
// separate kernels. One block of ADD_NORM_THREADS per row, the row's sums in shared
// memory (cols floats): the block reads all of a and b before it writes dst, and each
// element of the sum is read and written by one thread, so dst and sum may be a or b
// (the decoder's Add(ffn_inp, cur, inpL); RMSNorm(cur, ffn_inp)). The loads of a row
// are all issued before the first add (latency, not bandwidth, bounds a decode row).
// The sum of squares is rms_norm's: its 256 threads' strided double sums, warp sums,
// then the 8 warps' in order. OUT is what dst is also rounded to: ADD_NORM_F32 nothing,
// ADD_NORM_Q8K Q8_K (add_rms_norm_q8_k), ADD_NORM_Q8 Q8_0 or, with s1, Q8_1 as quant_q8
// would (add_rms_norm_q8: a warp's 32 consecutive elements are a block).
#define ADD_NORM_F32 0
#define ADD_NORM_Q8K 1
#define ADD_NORM_Q8 2
template <int OUT>
__device__ __forceinline__ void add_rms_norm_row(float* sum, const float* a, const float* b, float* dst, const float* w,
                                                 int cols, float eps, uint8_t* out, i64 ostride, int s1,
                                                 uint16_t* hout = nullptr, i64 hstride = 0) {
    constexpr bool Q8K = OUT == ADD_NORM_Q8K;
    extern __shared__ float xs[];  // cols floats: the row of sums
    __shared__ double part[8];
    __shared__ float sa[32], sx[32];
    __shared__ int si[32];
    const i64 r0 = (i64)blockIdx.x * cols;
    const int t = threadIdx.x;
    const int g = t >> 6, l = t & 63, nb = cols / 256;
    // Q8K: the first group of blocks' norm weights (weights: no kernel writes them) are
    // read before the wait for the kernel before (pdl_defer), off the row's chain.
    // Q8: the thread's norm weights, all of them, likewise.
    float wv[4], wq[ADD_NORM_PER];
    if (Q8K) {
#pragma unroll
        for (int i = 0; i < 4; i++) wv[i] = g < nb ? w[g * 256 + 64 * i + l] : 0.0f;
        pdl_wait();
    }
    if (OUT == ADD_NORM_Q8) {
#pragma unroll
        for (int i = 0; i < ADD_NORM_PER; i++) {
            const int j = t + i * ADD_NORM_THREADS;
            wq[i] = j < cols ? w[j] : 0.0f;
        }
        pdl_wait();
    }
    float av[ADD_NORM_PER], bv[ADD_NORM_PER];
#pragma unroll
    for (int i = 0; i < ADD_NORM_PER; i++) {
        const int j = t + i * ADD_NORM_THREADS;
        if (j < cols) av[i] = a[r0 + j], bv[i] = b[r0 + j];
    }
#pragma unroll
    for (int i = 0; i < ADD_NORM_PER; i++) {
        const int j = t + i * ADD_NORM_THREADS;
        if (j < cols) {
            const float s = av[i] + bv[i];
            xs[j] = s;
            sum[r0 + j] = s;
        }
    }
    __syncthreads();
    if (t < 256) {
        double s = 0;
        for (int j = t; j < cols; j += 256) s += (double)xs[j] * (double)xs[j];
        s = warp_sumd(s);
        if ((t & 31) == 0) part[t >> 5] = s;
    }
    __syncthreads();
    const float scale = rms_scale(part, 8, cols, eps);
    if (OUT == ADD_NORM_Q8) {  // cols % 32 == 0: a warp's elements are all in the row or all past it
        uint8_t* row = out + (i64)blockIdx.x * ostride;
#pragma unroll
        for (int i = 0; i < ADD_NORM_PER; i++) {
            const int j = t + i * ADD_NORM_THREADS;
            if (j < cols) {
                const float v = xs[j] * scale * wq[i];
                dst[r0 + j] = v;
                q8_quant_lane(v, row, j / 32, cols, s1);
            }
        }
        return;
    }
    if (!Q8K) {
        for (int j = t; j < cols; j += ADD_NORM_THREADS) dst[r0 + j] = xs[j] * scale * w[j];
        return;
    }
    uint8_t* row = out + (i64)blockIdx.x * ostride;
    // hstride < 0: the f16 rows in mmg_xl's layout at hout (rows of at most 64).
    uint16_t* hrow = hout && hstride >= 0 ? (uint16_t*)((uint8_t*)hout + (i64)blockIdx.x * hstride) : hout;
    const int xn = hout && hstride < 0 ? (int)blockIdx.x : -1;
    for (int ib0 = 0; ib0 < nb; ib0 += ADD_NORM_THREADS / 64) {  // a 256-element block per group of 64 threads
        const int ib = ib0 + g;
        const bool on = ib < nb;
        float v[4];
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int j = ib * 256 + 64 * i + l;
            v[i] = on ? xs[j] * scale * (ib0 == 0 ? wv[i] : w[j]) : 0.0f;
        }
        q8k_quant_wide(v, row, ib, cols, on, sa, si, sx, hrow, xn);
        if (on) {
#pragma unroll
            for (int i = 0; i < 4; i++) dst[r0 + ib * 256 + 64 * i + l] = v[i];
        }
    }
}

extern "C" __global__ void __launch_bounds__(ADD_NORM_THREADS) add_rms_norm(float* sum, const float* a, const float* b,
                                                                             float* dst, const float* w, int cols, float eps) { pdl_entry();
    add_rms_norm_row<ADD_NORM_F32>(sum, a, b, dst, w, cols, eps, nullptr, 0, 0);
}

// add_rms_norm_q8_k: cols % 256 == 0; out rows of ostride bytes; with hout, the rounded
// values d*q also in f16 rows of hstride bytes (act_f16's, for cuBLASLt), or with hstride
// -1 as mmg_xl lays them out (its zero rows past the row count left as they were).
extern "C" __global__ void __launch_bounds__(ADD_NORM_THREADS) add_rms_norm_q8_k(float* sum, const float* a, const float* b,
                                                                                  float* dst, const float* w, int cols,
                                                                                  float eps, uint8_t* out, i64 ostride,
                                                                                  uint16_t* hout, i64 hstride) { pdl_defer();
    add_rms_norm_row<ADD_NORM_Q8K>(sum, a, b, dst, w, cols, eps, out, ostride, 0, hout, hstride);
}

// add_rms_norm_q8_k_1: add_rms_norm_q8_k of one row (a decode step's) by one block of 256
// threads, with its bits: thread t reads a and b at j = t, t + 256, ... (every load issued
// first) and sums their sums' squares in that order, as add_rms_norm_row's thread t does;
// one barrier; then warp w rounds blocks w, w + 8, ... (q8k_quant_warp: q8k_quant_in's
// bits, as q8k_quant_wide's), its norm weights read before the wait. The 1,024-thread
// kernel's four barriers over 32 warps and its registers (it shares few SMs with the
// product before it) made a batch-1 step's norm ~3.9 us of the chain on the H200 (session
// 33: 8B Q4_K_M tg128 530 without the norms, 468 with); build/micro/mvn.cuh measured this
// form ~0.5 us shorter. cols % 256 == 0, cols <= ADD_NORM1_COLS; sum and dst may be a or b
// (each thread reads its elements of a and b before the barrier, and writes dst after it).
#define ADD_NORM1_COLS 8192
// norm1_row is add_rms_norm_q8_k_1's body for rows of at most 256 * NB columns, or with
// EXACT of exactly 256 * NB (the 2,048- and 4,096-wide rows of DeepSeek-V2-Lite and the
// 8B): its loops then have no guards, and the 2 NB loads of a and b issue back to back
// at fixed offsets (with guards, each reloads its pointer; session 54's PTX ran the
// 8B's rows in ~690 instructions against ~1,900 before).
// With ADD false it is rms_norm_q8_k's of one row a (b and sum unused): the sums of
// squares in rms_norm_q8_k's order, so its bits (the step's first norm, after GetRows).
template <int NB, bool EXACT, bool ADD = true>
__device__ __forceinline__ void norm1_row(float* sum, const float* a, const float* b, float* dst, const float* w, int cols,
                                          float eps, uint8_t* out, float* xs, double* part) {
    const int t = threadIdx.x, lane = t & 31, wp = t >> 5, nb = EXACT ? NB : cols / 256;
    float wv[NB / 8][8];
#pragma unroll
    for (int u = 0; u < NB / 8; u++)
        if (wp + 8 * u < nb) {
            const float4 x = *(const float4*)(w + (wp + 8 * u) * 256 + 8 * lane), y = *(const float4*)(w + (wp + 8 * u) * 256 + 8 * lane + 4);
            wv[u][0] = x.x, wv[u][1] = x.y, wv[u][2] = x.z, wv[u][3] = x.w, wv[u][4] = y.x, wv[u][5] = y.y, wv[u][6] = y.z, wv[u][7] = y.w;
        }
    pdl_wait();
    float av[NB], bv[NB];
#pragma unroll
    for (int k = 0; k < NB; k++)
        if (k < nb) av[k] = a[t + 256 * k], bv[k] = ADD ? b[t + 256 * k] : 0.0f;
    double ss = 0;
#pragma unroll
    for (int k = 0; k < NB; k++)
        if (k < nb) {
            const float s = ADD ? av[k] + bv[k] : av[k];
            xs[t + 256 * k] = s;
            if (ADD) sum[t + 256 * k] = s;
            ss += (double)s * (double)s;
        }
    ss = warp_sumd(ss);
    if (lane == 0) part[wp] = ss;
    __syncthreads();
    const float scale = rms_scale(part, 8, cols, eps);
#pragma unroll
    for (int u = 0; u < NB / 8; u++) {
        const int ib = wp + 8 * u;
        if (ib >= nb) break;
        float v[8];
#pragma unroll
        for (int i = 0; i < 8; i++) v[i] = xs[ib * 256 + 8 * lane + i] * scale * wv[u][i];
        *(float4*)(dst + ib * 256 + 8 * lane) = make_float4(v[0], v[1], v[2], v[3]);
        *(float4*)(dst + ib * 256 + 8 * lane + 4) = make_float4(v[4], v[5], v[6], v[7]);
        q8k_quant_warp(v, out, ib, cols);
    }
}

extern "C" __global__ void __launch_bounds__(256) add_rms_norm_q8_k_1(float* sum, const float* a, const float* b, float* dst,
                                                                       const float* w, int cols, float eps, uint8_t* out) {
    pdl_defer();
    __shared__ __align__(16) float xs[ADD_NORM1_COLS];
    __shared__ double part[8];
    if (cols == 2048)
        norm1_row<8, true>(sum, a, b, dst, w, cols, eps, out, xs, part);
    else if (cols == 4096)
        norm1_row<16, true>(sum, a, b, dst, w, cols, eps, out, xs, part);
    else
        norm1_row<ADD_NORM1_COLS / 256, false>(sum, a, b, dst, w, cols, eps, out, xs, part);
}

// rms_norm_q8_k_1: rms_norm_q8_k of one row (a decode step's first norm) by one block of
// 256 threads, with its bits (norm1_row without the add): rms_norm_q8_k's blocks each
// read the whole row and round theirs with two barriers (5-7 us of a step in session
// 100's timelines against add_rms_norm_q8_k_1's ~3.5). cols % 256 == 0, cols <=
// ADD_NORM1_COLS; dst may be x.
extern "C" __global__ void __launch_bounds__(256) rms_norm_q8_k_1(float* dst, const float* x, const float* w, int cols,
                                                                   float eps, uint8_t* out) {
    pdl_defer();
    __shared__ __align__(16) float xs[ADD_NORM1_COLS];
    __shared__ double part[8];
    if (cols == 2048)
        norm1_row<8, true, false>(nullptr, x, nullptr, dst, w, cols, eps, out, xs, part);
    else if (cols == 4096)
        norm1_row<16, true, false>(nullptr, x, nullptr, dst, w, cols, eps, out, xs, part);
    else
        norm1_row<ADD_NORM1_COLS / 256, false, false>(nullptr, x, nullptr, dst, w, cols, eps, out, xs, part);
}

// add_rms_norm_q8: cols % 32 == 0; out rows of ostride bytes, Q8_0 (s1: Q8_1) blocks.
extern "C" __global__ void __launch_bounds__(ADD_NORM_THREADS) add_rms_norm_q8(float* sum, const float* a, const float* b,
                                                                                float* dst, const float* w, int cols,
                                                                                float eps, uint8_t* out, i64 ostride, int s1) { pdl_defer();
    add_rms_norm_row<ADD_NORM_Q8>(sum, a, b, dst, w, cols, eps, out, ostride, s1);
}

// quant_half: F16 (bf == 0) or BF16 activations; quant_f32 copies.
extern "C" __global__ void quant_half(uint8_t* out, i64 ostride, const float* x, int k, int bf) { pdl_entry();
    uint16_t* row = (uint16_t*)(out + (i64)blockIdx.y * ostride);
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < k; j += gridDim.x * blockDim.x) {
        float v = x[(i64)blockIdx.y * k + j];
        row[j] = bf ? f2bf(v) : f2h(v);
    }
}
extern "C" __global__ void quant_f32(uint8_t* out, i64 ostride, const float* x, int k) { pdl_entry();
    float* row = (float*)(out + (i64)blockIdx.y * ostride);
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < k; j += gridDim.x * blockDim.x)
        row[j] = x[(i64)blockIdx.y * k + j];
}
