// ops.cu: the row and element ops of backend.Ops (GetRows, SetRows, Add, Mul, SwiGLU,
// RMSNorm, RoPE); the activation quantizers that MatMul runs before its dots, and the ops
// fused with them, are in quant.cu. Strides are in elements of the tensor's type unless
// named in bytes.
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
    const float scale = rms_scale(part, (int)(blockDim.x >> 5), cols, eps);
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

// OPS_STAGE is the elements a thread of mla_kv loads before it stores any: its loads are
// one round trip to memory, where a load then a store an element (which the compiler
// keeps in order: the store may alias the next load) made one round trip each. (The same
// staging in rope2_set lost on the H200: session 35, 8B Q4_K_M tg128 ~500 against ~508.)
#define OPS_STAGE 4

// mla_kv writes each token's latent key row into an F16 cache the way rms_norm (of kv),
// the placement of k_pe and kv in [k_pe | kv], rope_f32 (of the first rdims) and
// set_rows do it one after another, with the same float operations: row slots[i] of
// cache gets rope(kpe[i]) then rms_norm(kv[i]) * w. One block of 256 threads a token;
// rdims floats of dynamic shared memory. The table, the slot and the norm weights are
// read before the wait (the position and slot are the host's); rows of at most
// OPS_STAGE elements a thread (V2's and V3's 512) are read once, with k_pe, in one round
// trip, and kept in registers.
#define MLA_KV_ARGS                                                                                                  \
    uint16_t *cache, i64 cstride, const float *kv, i64 kvstride, int kvd, const float *kpe, i64 kpestride,          \
        const float *w, float eps, const int *pos, const int *slots, int rdims, int neox, float theta_scale,         \
        float freq_scale, const float *factors, float ext, float lo, float hi, float mscale
#define MLA_KV_CALL                                                                                                  \
    cache, cstride, kv, kvstride, kvd, kpe, kpestride, w, eps, pos, slots, rdims, neox, theta_scale, freq_scale,    \
        factors, ext, lo, hi, mscale

// mla_kv_body is mla_kv's block for token bx (256 threads: part's eight warps).
__device__ __forceinline__ void mla_kv_body(int bx, MLA_KV_ARGS) {
    extern __shared__ float mla_cs[];  // rdims floats
    float* cs = mla_cs;
    __shared__ double part[8];
    const int half = rdims / 2, t = threadIdx.x, nt = blockDim.x;
    const bool staged = kvd <= OPS_STAGE * nt;
    rope_table(cs, pos[bx], half, theta_scale, freq_scale, factors, ext, lo, hi, mscale);
    uint16_t* row = cache + (i64)slots[bx] * cstride;
    float wv[OPS_STAGE], x[OPS_STAGE];
#pragma unroll
    for (int u = 0; u < OPS_STAGE; u++)
        if (staged && t + u * nt < kvd) wv[u] = w[t + u * nt];
    pdl_wait();
    const float* in = kv + (i64)bx * kvstride;
    const float* pe = kpe + (i64)bx * kpestride;
    float p0 = 0.0f, p1 = 0.0f;  // k_pe's pair k = t, loaded with the row
    if (t < half) p0 = pe[neox ? t : 2 * t], p1 = pe[neox ? t + half : 2 * t + 1];
    double s = 0;
    if (staged) {
#pragma unroll
        for (int u = 0; u < OPS_STAGE; u++)
            if (t + u * nt < kvd) x[u] = in[t + u * nt];
#pragma unroll
        for (int u = 0; u < OPS_STAGE; u++)
            if (t + u * nt < kvd) s += (double)x[u] * (double)x[u];
    } else {
#pragma unroll 8
        for (int j = t; j < kvd; j += nt) s += (double)in[j] * (double)in[j];
    }
    s = warp_sumd(s);
    if ((t & 31) == 0) part[t >> 5] = s;
    __syncthreads();
    const float scale = rms_scale(part, (int)(nt >> 5), kvd, eps);
    if (staged) {
#pragma unroll
        for (int u = 0; u < OPS_STAGE; u++)
            if (t + u * nt < kvd) row[rdims + t + u * nt] = f2h(x[u] * scale * wv[u]);
    } else {
        for (int j = t; j < kvd; j += nt) row[rdims + j] = f2h(in[j] * scale * w[j]);
    }
    for (int k = t; k < half; k += nt) {
        const int a = neox ? k : 2 * k, b = neox ? k + half : 2 * k + 1;
        const float c = cs[2 * k], sn = cs[2 * k + 1], x0 = k == t ? p0 : pe[a], x1 = k == t ? p1 : pe[b];
        row[a] = f2h(x0 * c - x1 * sn);
        row[b] = f2h(x0 * sn + x1 * c);
    }
}

extern "C" __global__ void __launch_bounds__(256) mla_kv(MLA_KV_ARGS) { pdl_defer();
    mla_kv_body(blockIdx.x, MLA_KV_CALL);
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
#define ROPE2_SET_ARGS                                                                                                 \
    float *x1, int width1, int nb1, float *x2, int width2, int hpb, const int *pos, int head_dim, int dims, int neox, \
        float theta_scale, float freq_scale, const float *factors, float ext, float lo, float hi, float mscale,        \
        uint8_t *kc, int kf16, const int *rows, uint8_t *vc, int vf16, const float *vs, int vcols, int g3
#define ROPE2_SET_CALL                                                                                                 \
    x1, width1, nb1, x2, width2, hpb, pos, head_dim, dims, neox, theta_scale, freq_scale, factors, ext, lo, hi,      \
        mscale, kc, kf16, rows, vc, vf16, vs, vcols, g3

// rope2_set_body is rope2_set's block (bx, by) of any size.
__device__ __forceinline__ void rope2_set_body(int bx, int by, ROPE2_SET_ARGS) {
    extern __shared__ float r2s_cs[];  // dims floats
    float* cs = r2s_cs;
    const int nb2 = (width2 / head_dim + hpb - 1) / hpb;
    int half = dims / 2, y = by;
    if (y >= nb1 + nb2) {
        pdl_wait();
        set_row(vc, vf16, vs, rows[bx], bx, vcols, y - nb1 - nb2, g3);
        return;
    }
    // The table needs only the position (written by the host before the step, like
    // every position) and the frequency factors (weights): it is computed while the
    // kernel before finishes.
    rope_table(cs, pos[bx], half, theta_scale, freq_scale, factors, ext, lo, hi, mscale);
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
    float* row = x + (i64)bx * width;
    rope_heads(row, h0, h1, head_dim, half, neox, cs);
    if (!isk) return;
    __syncthreads();  // the block's rotated heads are in row
    const i64 r = rows[bx];
    for (int j = h0 * head_dim + threadIdx.x; j < h1 * head_dim; j += blockDim.x) {
        const float v = row[j];
        if (kf16)
            ((uint16_t*)kc)[r * width2 + j] = f2h(v);
        else
            ((float*)kc)[r * width2 + j] = v;
    }
}

extern "C" __global__ void rope2_set(ROPE2_SET_ARGS) { pdl_defer();
    rope2_set_body(blockIdx.x, blockIdx.y, ROPE2_SET_CALL);
}

// mla_kv_rope: mla_kv (blocks x < n: token x's latent key row into the cache) and
// rope2_set of one tensor (no Q, no V: the other blocks, rope2_set's (row, group)
// blocks in row order, x2's rows rotated then copied into kc's rows rows[i]) in one
// launch of 256 threads, grid n + rows2 * nb2: a DeepSeek-V2 decode step's
// latent-cache branch, the cache row then the query's rope dims (fuse.go). Both take
// mla_kv's RoPE parameters (the host checks they are the same); the rotation's
// positions are pos2.
extern "C" __global__ void __launch_bounds__(256) mla_kv_rope(MLA_KV_ARGS, int n, float* x2, int width2, int hpb,
                                                             const int* pos2, int head_dim, uint8_t* kc, int kf16,
                                                             const int* rows) { pdl_defer();
    if ((int)blockIdx.x < n) {
        mla_kv_body(blockIdx.x, MLA_KV_CALL);
        return;
    }
    const int nb2 = (width2 / head_dim + hpb - 1) / hpb, b = blockIdx.x - n;
    rope2_set_body(b / nb2, b % nb2, nullptr, 0, 0, x2, width2, hpb, pos2, head_dim, rdims, neox, theta_scale, freq_scale,
                   factors, ext, lo, hi, mscale, kc, kf16, rows, nullptr, 0, nullptr, 0, 0);
}
