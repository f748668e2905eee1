// dequant.cu: weights to f16 for the cuBLASLt products of large batches
// (inference/backend/cuda/cublaslt_matmul.go). Each value is computed in f32 exactly as
// quant.Dequantize computes it (common.cuh's deq, or the same float operations written
// out for a run of eight elements), then rounded to the nearest half, ties to even.
//
// dequant_f16_T(w, wstride, out, k, rows): rows of k elements of type T (device layout,
// rows of wstride bytes) to out, rows x k halves, dense (row stride 2k bytes). k is a
// multiple of 8 (every quantized type's blocks are); each thread makes eight consecutive
// values of one row and writes them with one 16-byte store, so a warp writes 512
// consecutive bytes. The grid loops over the (row, group of eight) pairs.
#include "common.cuh"

// dq_pack rounds eight floats to halves and packs them, element 0 in the low bits.
__device__ __forceinline__ uint4 dq_pack(const float* v) {
    uint4 o;
    o.x = (uint32_t)f2h(v[0]) | ((uint32_t)f2h(v[1]) << 16);
    o.y = (uint32_t)f2h(v[2]) | ((uint32_t)f2h(v[3]) << 16);
    o.z = (uint32_t)f2h(v[4]) | ((uint32_t)f2h(v[5]) << 16);
    o.w = (uint32_t)f2h(v[6]) | ((uint32_t)f2h(v[7]) << 16);
    return o;
}

// dq_eight computes elements j0..j0+7 (j0 a multiple of 8) of a row of nb blocks. The
// eight share one sub-block scale in Q4_K (32 elements), Q6_K (16) and Q8_0 (32), so the
// scale is read once; the float operations are those of quant's dequantQ4_K
// (d*sc, dmin*m, d1*q - m1), dequantQ6_K ((d*sc)*q) and dequantQ8_0 (q*d). The other
// types take deq per element.
template <int T>
__device__ __forceinline__ void dq_eight(const uint8_t* row, int j0, int nb, float* v) {
    if (T == T_Q4_K) {
        const uint8_t* b = row + 144 * (j0 / 256);
        int p = j0 % 256, sc, m;
        scale_min_k4(p / 32, b + 4, &sc, &m);
        float d1 = __fmul_rn(ldh(b), (float)sc);
        float m1 = __fmul_rn(ldh(b + 2), (float)m);
        const uint8_t* qs = b + 16 + 32 * (p / 64) + p % 32;
        int sh = 4 * ((p / 32) % 2);
#pragma unroll
        for (int e = 0; e < 8; e++) v[e] = __fsub_rn(__fmul_rn(d1, (float)((qs[e] >> sh) & 0x0f)), m1);
    } else if (T == T_Q6_K) {
        int ib = j0 / 256, p = j0 % 256;
        float d = ldh(row + 208 * nb + 2 * ib);
        float dsc = __fmul_rn(d, (float)(int)(int8_t)row[192 * nb + 16 * ib + p / 16]);
        const uint8_t* ql = row + 128 * ib;
        const uint8_t* qh = row + 128 * nb + 64 * ib;
#pragma unroll
        for (int e = 0; e < 8; e++) v[e] = __fmul_rn(dsc, (float)(q6_at(ql, qh, p + e) - 32));
    } else if (T == T_Q8_0) {
        float d = ldh(row + 32 * nb + 2 * (j0 / 32));
        const uint8_t* qs = row + j0;
#pragma unroll
        for (int e = 0; e < 8; e++) v[e] = __fmul_rn((float)(int)(int8_t)qs[e], d);
    } else {
#pragma unroll
        for (int e = 0; e < 8; e++) v[e] = deq<T>(row, j0 + e, nb);
    }
}

// blocks per row for deq: the number of 256- or 32-element blocks (unused by the
// unquantized types).
template <int T>
__device__ __forceinline__ int dq_blocks(i64 k) {
    if (T == T_Q4_K || T == T_Q5_K || T == T_Q6_K || T == T_Q2_K || T == T_Q3_K) return (int)(k / 256);
    return (int)(k / 32);
}

template <int T>
__device__ __forceinline__ void dequant_rows(const uint8_t* w, i64 wstride, uint4* out, i64 k, i64 rows) {
    const i64 groups = k / 8, total = rows * groups;
    const int nb = dq_blocks<T>(k);
    for (i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += (i64)gridDim.x * blockDim.x) {
        i64 r = t / groups;
        int j0 = (int)(t - r * groups) * 8;
        float v[8];
        dq_eight<T>(w + r * wstride, j0, nb, v);
        out[t] = dq_pack(v);
    }
}

#define DEQUANT(name, T)                                                                                    \
    extern "C" __global__ void name(const uint8_t* w, i64 wstride, uint4* out, i64 k, i64 rows) {           \
        pdl_entry();                                                                                        \
        dequant_rows<T>(w, wstride, out, k, rows);                                                          \
    }

DEQUANT(dequant_f16_q4_0, T_Q4_0)
DEQUANT(dequant_f16_q4_1, T_Q4_1)
DEQUANT(dequant_f16_q5_0, T_Q5_0)
DEQUANT(dequant_f16_q5_1, T_Q5_1)
DEQUANT(dequant_f16_q8_0, T_Q8_0)
DEQUANT(dequant_f16_q2_k, T_Q2_K)
DEQUANT(dequant_f16_q3_k, T_Q3_K)
DEQUANT(dequant_f16_q4_k, T_Q4_K)
DEQUANT(dequant_f16_q5_k, T_Q5_K)
DEQUANT(dequant_f16_q6_k, T_Q6_K)
DEQUANT(dequant_f16_bf16, T_BF16)

// act_f16 rewrites quantized activation rows (the weights' dot partners, common.cuh:
// kind 0 Q8_0 or Q8_1, blocks of 32; kind 1 Q8_K, blocks of 256: int8 quants then f32
// scales; kind 2 BF16) as f16 rows for cuBLASLt: each value d*q (as quant.Dequantize
// computes it) rounded to f16, so that a product on cuBLASLt sees the activations the
// reference rounds them to. Eight values a thread; grid (ceil(k/2048), rows); k % 8 == 0.
extern "C" __global__ void act_f16(uint8_t* out, i64 ostride, const uint8_t* in, i64 istride, int k, int kind) {
    pdl_entry();
    const int e = (blockIdx.x * blockDim.x + threadIdx.x) * 8;
    if (e >= k) return;
    const uint8_t* row = in + (i64)blockIdx.y * istride;
    uint16_t h[8];
    if (kind == 2) {
        const uint16_t* v = (const uint16_t*)row + e;
#pragma unroll
        for (int j = 0; j < 8; j++) h[j] = f2h(bf2f(v[j]));
    } else {
        const float d = ((const float*)(row + k))[e / (kind == 1 ? 256 : 32)];
        const uint2 q = *(const uint2*)(row + e);
        const uint32_t qw[2] = {q.x, q.y};
#pragma unroll
        for (int j = 0; j < 8; j++) h[j] = f2h(d * (float)(int8_t)(qw[j / 4] >> (8 * (j % 4))));
    }
    uint4 o;
    o.x = h[0] | ((uint32_t)h[1] << 16);
    o.y = h[2] | ((uint32_t)h[3] << 16);
    o.z = h[4] | ((uint32_t)h[5] << 16);
    o.w = h[6] | ((uint32_t)h[7] << 16);
    *(uint4*)(out + (i64)blockIdx.y * ostride + 2 * (i64)e) = o;
}
