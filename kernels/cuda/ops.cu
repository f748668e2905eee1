// ops.cu: the row and element ops of backend.Ops (GetRows, SetRows, Add, Mul, SwiGLU,
// RMSNorm, RoPE) and the activation quantizers that MatMul runs before its dots.
// Strides are in elements of the tensor's type unless named in bytes.
#include "common.cuh"

template <int T>
__device__ void get_rows(float* dst, const uint8_t* table, i64 tstride, const int* ids, int cols, int nb) {
    int i = blockIdx.y;
    const uint8_t* row = table + (i64)ids[i] * tstride;
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < cols; j += gridDim.x * blockDim.x)
        dst[(i64)i * cols + j] = deq<T>(row, j, nb);
}

#define GET_ROWS(NAME, T) \
    extern "C" __global__ void get_rows_##NAME(float* dst, const uint8_t* table, i64 tstride, const int* ids, int cols, int nb) { pdl_entry(); \
        get_rows<T>(dst, table, tstride, ids, cols, nb); \
    }
GET_ROWS(f32, T_F32)
GET_ROWS(f16, T_F16)
GET_ROWS(bf16, T_BF16)
GET_ROWS(q4_0, T_Q4_0)
GET_ROWS(q4_1, T_Q4_1)
GET_ROWS(q5_0, T_Q5_0)
GET_ROWS(q5_1, T_Q5_1)
GET_ROWS(q8_0, T_Q8_0)
GET_ROWS(q2_k, T_Q2_K)
GET_ROWS(q3_k, T_Q3_K)
GET_ROWS(q4_k, T_Q4_K)
GET_ROWS(q5_k, T_Q5_K)
GET_ROWS(q6_k, T_Q6_K)

// set_row writes row i of src (cols) into row r of dst, F32 (f16 == 0) or F16, with
// the threads of gx blocks (the block's index bx among them).
__device__ __forceinline__ void set_row(uint8_t* dst, int f16, const float* src, i64 r, int i, int cols, int bx, int gx) {
    for (int j = bx * blockDim.x + threadIdx.x; j < cols; j += gx * blockDim.x) {
        float v = src[(i64)i * cols + j];
        if (f16)
            ((uint16_t*)dst)[r * cols + j] = f2h(v);
        else
            ((float*)dst)[r * cols + j] = v;
    }
}

// set_rows: dst[rows[i], :] = src[i, :], dst F32 (f16 == 0) or F16.
extern "C" __global__ void set_rows(uint8_t* dst, int f16, const float* src, const int* rows, int cols) { pdl_entry();
    set_row(dst, f16, src, rows[blockIdx.y], blockIdx.y, cols, blockIdx.x, gridDim.x);
}

// set_rows2: set_rows of src1 into dst1 and of src2 into dst2 with the same row ids (K
// and V into their caches), one launch; grid (g1 + g2, n): the first g1 blocks of a grid
// row copy src1 as set_rows' grid of g1 would, the rest src2. The host fuses only when
// neither destination overlaps the other launch's source or destination.
extern "C" __global__ void set_rows2(uint8_t* dst1, int f16_1, const float* src1, int cols1, int g1,
                                     uint8_t* dst2, int f16_2, const float* src2, int cols2, const int* rows) { pdl_entry();
    const i64 r = rows[blockIdx.y];
    if ((int)blockIdx.x < g1)
        set_row(dst1, f16_1, src1, r, blockIdx.y, cols1, blockIdx.x, g1);
    else
        set_row(dst2, f16_2, src2, r, blockIdx.y, cols2, blockIdx.x - g1, gridDim.x - g1);
}

// binary: dst = a op b over n elements; b has bn elements (n, or one row of cols).
extern "C" __global__ void add_f32(float* dst, const float* a, const float* b, i64 n, i64 bn) { pdl_entry();
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (i64)gridDim.x * blockDim.x)
        dst[i] = a[i] + b[i % bn];
}
extern "C" __global__ void mul_f32(float* dst, const float* a, const float* b, i64 n, i64 bn) { pdl_entry();
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (i64)gridDim.x * blockDim.x)
        dst[i] = a[i] * b[i % bn];
}
// swiglu: dst = g / (1 + exp(-g)) * u, exp in double as the reference.
extern "C" __global__ void swiglu_f32(float* dst, const float* g, const float* u, i64 n) { pdl_entry();
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (i64)gridDim.x * blockDim.x) {
        float x = g[i];
        float e = (float)exp(-(double)x);
        dst[i] = x / (1.0f + e) * u[i];
    }
}

// rms_norm: one block of 256 threads per row; the sum of squares in double.
extern "C" __global__ void rms_norm(float* dst, const float* x, const float* w, int cols, float eps) { pdl_entry();
    __shared__ double part[8];
    const float* in = x + (i64)blockIdx.x * cols;
    float* out = dst + (i64)blockIdx.x * cols;
    double s = 0;
#pragma unroll 8
    for (int j = threadIdx.x; j < cols; j += blockDim.x) s += (double)in[j] * (double)in[j];
    s = warp_sumd(s);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = s;
    __syncthreads();
    double sum = 0;
    for (int k = 0; k < (int)(blockDim.x >> 5); k++) sum += part[k];
    float mean = (float)(sum / (double)cols);
    float scale = (float)(1.0 / sqrt((double)(mean + eps)));
    for (int j = threadIdx.x; j < cols; j += blockDim.x) out[j] = in[j] * scale * w[j];
}

// rope_table: the cos and sin (times mscale) of each of the half = dims/2 angles of
// position p into cs, as backend.RoPEAngles (a running float32 product for theta, cos and
// sin in double).
__device__ __forceinline__ void rope_table(float* cs, int p, int half, float theta_scale, float freq_scale,
                                           const float* factors, float ext, float lo, float hi, float mscale) {
    for (int i = threadIdx.x; i < half; i += blockDim.x) {
        float theta = (float)p;
        for (int k = 0; k < i; k++) theta = theta * theta_scale;
        float ff = factors ? factors[i] : 1.0f;
        float extrap = theta / ff;
        float interp = freq_scale * extrap;
        float th = interp;
        if (ext != 0.0f) {
            float y = ((float)i - lo) / (float)fmax(0.001, (double)(hi - lo));
            float ramp = 1.0f - (float)fmin(1.0, fmax(0.0, (double)y));
            float mix = ramp * ext;
            th = interp * (1.0f - mix) + extrap * mix;
        }
        cs[2 * i] = (float)cos((double)th) * mscale;
        cs[2 * i + 1] = (float)sin((double)th) * mscale;
    }
}

// rope_heads rotates heads [h0, h1) of one row by the table cs. neox pairs i with
// i + half, otherwise 2i with 2i + 1.
__device__ __forceinline__ void rope_heads(float* row, int h0, int h1, int head_dim, int half, int neox, const float* cs) {
    for (int idx = threadIdx.x; idx < (h1 - h0) * half; idx += blockDim.x) {
        int h = h0 + idx / half, k = idx % half;
        int a = neox ? k : 2 * k, b = neox ? k + half : 2 * k + 1;
        float* hd = row + h * head_dim;
        float c = cs[2 * k], s = cs[2 * k + 1];
        float x0 = hd[a], x1 = hd[b];
        hd[a] = x0 * c - x1 * s;
        hd[b] = x0 * s + x1 * c;
    }
}

// rope: one block per row of x [rows, width], rotating each head's first dims values.
extern "C" __global__ void rope_f32(float* x, const int* pos, int width, int head_dim, int dims, int neox,
                                    float theta_scale, float freq_scale, const float* factors, float ext,
                                    float lo, float hi, float mscale) { pdl_entry();
    extern __shared__ float cs[];  // dims floats
    int half = dims / 2;
    rope_table(cs, pos[blockIdx.x], half, theta_scale, freq_scale, factors, ext, lo, hi, mscale);
    __syncthreads();
    rope_heads(x + (i64)blockIdx.x * width, 0, width / head_dim, head_dim, half, neox, cs);
}

// mla_kv writes each token's latent key row into an F16 cache the way rms_norm (of kv),
// the placement of k_pe and kv in [k_pe | kv], rope_f32 (of the first rdims) and
// set_rows do it one after another, with the same float operations: row slots[i] of
// cache gets rope(kpe[i]) then rms_norm(kv[i]) * w. One block of 256 threads a token;
// rdims floats of dynamic shared memory.
extern "C" __global__ void __launch_bounds__(256) mla_kv(uint16_t* cache, i64 cstride, const float* kv, i64 kvstride,
                                                        int kvd, const float* kpe, i64 kpestride, const float* w,
                                                        float eps, const int* pos, const int* slots, int rdims,
                                                        int neox, float theta_scale, float freq_scale,
                                                        const float* factors, float ext, float lo, float hi,
                                                        float mscale) { pdl_entry();
    extern __shared__ float cs[];  // rdims floats
    __shared__ double part[8];
    const int half = rdims / 2;
    const float* in = kv + (i64)blockIdx.x * kvstride;
    double s = 0;
#pragma unroll 8
    for (int j = threadIdx.x; j < kvd; j += blockDim.x) s += (double)in[j] * (double)in[j];
    s = warp_sumd(s);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = s;
    rope_table(cs, pos[blockIdx.x], half, theta_scale, freq_scale, factors, ext, lo, hi, mscale);
    __syncthreads();
    double sum = 0;
    for (int k = 0; k < (int)(blockDim.x >> 5); k++) sum += part[k];
    const float mean = (float)(sum / (double)kvd);
    const float scale = (float)(1.0 / sqrt((double)(mean + eps)));
    uint16_t* row = cache + (i64)slots[blockIdx.x] * cstride;
    for (int j = threadIdx.x; j < kvd; j += blockDim.x) row[rdims + j] = f2h(in[j] * scale * w[j]);
    const float* pe = kpe + (i64)blockIdx.x * kpestride;
    for (int k = threadIdx.x; k < half; k += blockDim.x) {
        const int a = neox ? k : 2 * k, b = neox ? k + half : 2 * k + 1;
        const float c = cs[2 * k], sn = cs[2 * k + 1], x0 = pe[a], x1 = pe[b];
        row[a] = f2h(x0 * c - x1 * sn);
        row[b] = f2h(x0 * sn + x1 * c);
    }
}

// rope2_f32: rope_f32 of x1 [rows, width1] and of x2 [rows, width2] (Q and K) with the
// same positions and parameters, one launch. Grid (rows, nb1 + nb2): grid column y < nb1
// rotates heads [y*hpb, (y+1)*hpb) of x1's row, the others those of x2 (nb2 groups).
// Each block computes the row's table as rope_f32 does; x1 and x2 do not overlap.
extern "C" __global__ void rope2_f32(float* x1, int width1, int nb1, float* x2, int width2, int hpb,
                                     const int* pos, int head_dim, int dims, int neox, float theta_scale,
                                     float freq_scale, const float* factors, float ext, float lo, float hi,
                                     float mscale) { pdl_entry();
    extern __shared__ float cs[];  // dims floats
    int half = dims / 2, y = blockIdx.y;
    float* x = x1;
    int width = width1;
    if (y >= nb1) {
        x = x2;
        width = width2;
        y -= nb1;
    }
    int h0 = y * hpb, h1 = min(width / head_dim, h0 + hpb);
    rope_table(cs, pos[blockIdx.x], half, theta_scale, freq_scale, factors, ext, lo, hi, mscale);
    __syncthreads();
    rope_heads(x + (i64)blockIdx.x * width, h0, h1, head_dim, half, neox, cs);
}

// rope2_set: rope2_f32 of Q (x1) and K (x2), then what set_rows2 would do after it: the
// rotated K rows into the K cache (kc rows rows[i], F16 when kf16) and the V rows (vs,
// vcols) into the V cache (vc, F16 when vf16): a decode step's RoPE and cache writes in
// one launch. Grid (rows, nb1 + nb2 + g3): the first nb1 + nb2 blocks of a grid row
// rotate as rope2_f32's do, those of K then copying their heads (every value) to the
// cache; the last g3 copy V as set_rows' grid of g3 would (g3 = 0, vc null: no V yet).
extern "C" __global__ void rope2_set(float* x1, int width1, int nb1, float* x2, int width2, int hpb,
                                     const int* pos, int head_dim, int dims, int neox, float theta_scale,
                                     float freq_scale, const float* factors, float ext, float lo, float hi,
                                     float mscale, uint8_t* kc, int kf16, const int* rows, uint8_t* vc, int vf16,
                                     const float* vs, int vcols, int g3) { pdl_defer();
    extern __shared__ float cs[];  // dims floats
    const int nb2 = (width2 / head_dim + hpb - 1) / hpb;
    int half = dims / 2, y = blockIdx.y;
    if (y >= nb1 + nb2) {
        pdl_wait();
        set_row(vc, vf16, vs, rows[blockIdx.x], blockIdx.x, vcols, y - nb1 - nb2, g3);
        return;
    }
    // The table needs only the position (written by the host before the step, like
    // every position) and the frequency factors (weights): it is computed while the
    // kernel before finishes.
    rope_table(cs, pos[blockIdx.x], half, theta_scale, freq_scale, factors, ext, lo, hi, mscale);
    pdl_wait();
    float* x = x1;
    int width = width1;
    const bool isk = y >= nb1;
    if (isk) {
        x = x2;
        width = width2;
        y -= nb1;
    }
    int h0 = y * hpb, h1 = min(width / head_dim, h0 + hpb);
    __syncthreads();
    float* row = x + (i64)blockIdx.x * width;
    rope_heads(row, h0, h1, head_dim, half, neox, cs);
    if (!isk) return;
    __syncthreads();  // the block's rotated heads are in row
    const i64 r = rows[blockIdx.x];
    for (int j = h0 * head_dim + threadIdx.x; j < h1 * head_dim; j += blockDim.x) {
        const float v = row[j];
        if (kf16)
            ((uint16_t*)kc)[r * width2 + j] = f2h(v);
        else
            ((float*)kc)[r * width2 + j] = v;
    }
}

// ---- activation quantizers: x [rows, k] F32 -> the dot partner layouts of common.cuh ----

// quant_q8_0 / quant_q8_1: one warp per 32-element block, 8 blocks per CUDA block;
// grid (ceil(nb/8), rows). s1 != 0 writes the Q8_1 sums.
extern "C" __global__ void quant_q8(uint8_t* out, i64 ostride, const float* x, int k, int s1) { pdl_entry();
    int nb = k / 32;
    int ib = blockIdx.x * 8 + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (ib >= nb) return;
    float v = x[(i64)blockIdx.y * k + ib * 32 + lane];
    float amax = warp_max(fabsf(v));
    float d = amax / 127.0f;
    float id = d != 0.0f ? 1.0f / d : 0.0f;
    int q = (int)(int8_t)(int)roundf(v * id);
    uint8_t* row = out + (i64)blockIdx.y * ostride;
    row[ib * 32 + lane] = (uint8_t)(int8_t)q;
    int sum = warp_sumi(q);
    if (lane == 0) {
        float* ds = (float*)(row + k);
        ds[ib] = h2f(f2h(d));
        if (s1) ds[nb + ib] = h2f(f2h((float)sum * d));
    }
}

// swiglu_q8: swiglu_f32 over rows of k, then quantized to Q8_0 (s1: Q8_1) as quant_q8
// does; grid (ceil(k/256), rows), a warp a 32-element block.
extern "C" __global__ void swiglu_q8(float* dst, const float* g, const float* u, int k, uint8_t* out, i64 ostride,
                                     int s1) { pdl_entry();
    const int nb = k / 32;
    const int ib = blockIdx.x * 8 + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (ib >= nb) return;
    const i64 j = (i64)blockIdx.y * k + ib * 32 + lane;
    const float x = g[j];
    const float e = (float)exp(-(double)x);
    const float v = x / (1.0f + e) * u[j];
    dst[j] = v;
    float amax = warp_max(fabsf(v));
    float d = amax / 127.0f;
    float id = d != 0.0f ? 1.0f / d : 0.0f;
    int q = (int)(int8_t)(int)roundf(v * id);
    uint8_t* row = out + (i64)blockIdx.y * ostride;
    row[ib * 32 + lane] = (uint8_t)(int8_t)q;
    int sum = warp_sumi(q);
    if (lane == 0) {
        float* ds = (float*)(row + k);
        ds[ib] = h2f(f2h(d));
        if (s1) ds[nb + ib] = h2f(f2h((float)sum * d));
    }
}

// q8k_quant: q8k_quant_in for a 256-thread block.
__device__ __forceinline__ void q8k_quant(float v, uint8_t* row, int ib, int k) {
    __shared__ float sa[8];
    __shared__ int si[8];
    __shared__ float sv[256];
    q8k_quant_in(v, row, ib, k, threadIdx.x, sa, si, sv, true);
}

// quant_q8_k: one 256-thread block per 256-element block; grid (nb, rows).
extern "C" __global__ void __launch_bounds__(256) quant_q8_k(uint8_t* out, i64 ostride, const float* x, int k) { pdl_entry();
    q8k_quant(x[(i64)blockIdx.y * k + blockIdx.x * 256 + threadIdx.x], out + (i64)blockIdx.y * ostride, blockIdx.x, k);
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
    double sum = 0;
    for (int k = 0; k < 8; k++) sum += part[k];
    float mean = (float)(sum / (double)cols);
    float scale = (float)(1.0 / sqrt((double)(mean + eps)));
    const int j = blockIdx.x * 256 + threadIdx.x;
    const float v = in[j] * scale * w[j];  // dst never aliases x here: the host fuses only then
    q8k_quant(v, out + (i64)blockIdx.y * ostride, blockIdx.x, cols);
    o[j] = v;
}

// swiglu_q8_k: swiglu_f32 over rows of k, then quantized to Q8_K; grid (k/256, rows).
extern "C" __global__ void __launch_bounds__(256) swiglu_q8_k(float* dst, const float* g, const float* u, int k,
                                                              uint8_t* out, i64 ostride) { pdl_entry();
    const i64 j = (i64)blockIdx.y * k + blockIdx.x * 256 + threadIdx.x;
    const float x = g[j];
    const float e = (float)exp(-(double)x);
    const float v = x / (1.0f + e) * u[j];
    dst[j] = v;
    q8k_quant(v, out + (i64)blockIdx.y * ostride, blockIdx.x, k);
}

// get_rows_q8_k: get_rows_f32 into x (the gathered rows of gcols values laid end to end),
// then x's rows of k quantized to Q8_K as quant_q8_k does; grid (k/256, rows of x). The
// table (tstride bytes a row) does not overlap x.
extern "C" __global__ void __launch_bounds__(256) get_rows_q8_k(float* x, const uint8_t* table, i64 tstride,
                                                               const int* ids, int gcols, int k, uint8_t* out,
                                                               i64 ostride) { pdl_entry();
    const i64 e = (i64)blockIdx.y * k + blockIdx.x * 256 + threadIdx.x;
    const i64 gr = e / gcols;
    const int gc = (int)(e - gr * gcols);
    const float v = ((const float*)(table + (i64)ids[gr] * tstride))[gc];
    x[e] = v;
    q8k_quant(v, out + (i64)blockIdx.y * ostride, blockIdx.x, k);
}

#define ADD_NORM_THREADS 1024
#define ADD_NORM_PER 8  // elements of a row per thread: rows of up to 8192 (addNormMaxCols)

// q8k_quant_wide quantizes up to 16 Q8_K blocks of a row at once, as q8k_quant_in does
// each: the 64 threads of group g = t / 64 take block ib (its elements l + 64i, i < 4,
// l = t % 64, values v[i]); the largest magnitude (the first on ties, NaN never) is
// found by the two warps of the group and met in shared memory (sm: 2 floats and 2
// ints per warp, 32 warps), one barrier for all the blocks.
__device__ __forceinline__ void q8k_quant_wide(const float v[4], uint8_t* row, int ib, int k, bool on, float* sa,
                                               int* si, float* sx) {
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
        if (a2 > a || (a2 == a && i2 < idx)) { a = a2; idx = i2; x = x2; }
    }
    if (lane == 0) { sa[w] = a; si[w] = idx; sx[w] = x; }
    __syncthreads();
    {
        const int o = w ^ 1;  // the group's other warp
        const float a2 = sa[o], x2 = sx[o];
        const int i2 = si[o];
        if (a2 > a || (a2 == a && i2 < idx)) { a = a2; idx = i2; x = x2; }
    }
    __syncthreads();  // the arrays may be reused by the next round
    if (!on) return;
    float* dd = (float*)(row + k);
    int* bsums = (int*)(row + Q8K_BSUMS(k));
    float iscale = 0.0f, d = 0.0f;
    if (a > 0.0f) {
        iscale = -127.0f / x;
        d = 1.0f / iscale;
    }
#pragma unroll
    for (int i = 0; i < 4; i++) {
        int q = 0;
        if (a > 0.0f) {
            const float f = iscale * v[i] + 12582912.0f;
            q = min(127, (__float_as_int(f) & 0x007fffff) - 0x00400000);
        }
        row[ib * 256 + 64 * i + l] = (uint8_t)(int8_t)q;
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
// then the 8 warps' in order.
template <bool Q8K>
__device__ __forceinline__ void add_rms_norm_row(float* sum, const float* a, const float* b, float* dst, const float* w,
                                                 int cols, float eps, uint8_t* out, i64 ostride) {
    extern __shared__ float xs[];  // cols floats: the row of sums
    __shared__ double part[8];
    __shared__ float sa[32], sx[32];
    __shared__ int si[32];
    const i64 r0 = (i64)blockIdx.x * cols;
    const int t = threadIdx.x;
    const int g = t >> 6, l = t & 63, nb = cols / 256;
    // Q8K: the first group of blocks' norm weights (weights: no kernel writes them) are
    // read before the wait for the kernel before (pdl_defer), off the row's chain.
    float wv[4];
    if (Q8K) {
#pragma unroll
        for (int i = 0; i < 4; i++) wv[i] = g < nb ? w[g * 256 + 64 * i + l] : 0.0f;
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
    double ss = 0;
    for (int k = 0; k < 8; k++) ss += part[k];
    const float mean = (float)(ss / (double)cols);
    const float scale = (float)(1.0 / sqrt((double)(mean + eps)));
    if (!Q8K) {
        for (int j = t; j < cols; j += ADD_NORM_THREADS) dst[r0 + j] = xs[j] * scale * w[j];
        return;
    }
    uint8_t* row = out + (i64)blockIdx.x * ostride;
    for (int ib0 = 0; ib0 < nb; ib0 += ADD_NORM_THREADS / 64) {  // a 256-element block per group of 64 threads
        const int ib = ib0 + g;
        const bool on = ib < nb;
        float v[4];
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int j = ib * 256 + 64 * i + l;
            v[i] = on ? xs[j] * scale * (ib0 == 0 ? wv[i] : w[j]) : 0.0f;
        }
        q8k_quant_wide(v, row, ib, cols, on, sa, si, sx);
        if (on) {
#pragma unroll
            for (int i = 0; i < 4; i++) dst[r0 + ib * 256 + 64 * i + l] = v[i];
        }
    }
}

extern "C" __global__ void __launch_bounds__(ADD_NORM_THREADS) add_rms_norm(float* sum, const float* a, const float* b,
                                                                             float* dst, const float* w, int cols, float eps) { pdl_entry();
    add_rms_norm_row<false>(sum, a, b, dst, w, cols, eps, nullptr, 0);
}

// add_rms_norm_q8_k: cols % 256 == 0; out rows of ostride bytes.
extern "C" __global__ void __launch_bounds__(ADD_NORM_THREADS) add_rms_norm_q8_k(float* sum, const float* a, const float* b,
                                                                                  float* dst, const float* w, int cols,
                                                                                  float eps, uint8_t* out, i64 ostride) { pdl_defer();
    add_rms_norm_row<true>(sum, a, b, dst, w, cols, eps, out, ostride);
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
