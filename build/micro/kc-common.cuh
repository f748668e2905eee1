// kc-common.cuh: kernels/cuda/common.cuh (session 91) with pdl_wait calling mvx_wait (mvx.cuh) when
// a block's dynamic shared memory size has bit 3 set; s91-call3.sh puts it in /tmp/kc.
// common.cuh: helpers shared by the Ember CUDA kernels. Every float operation here is
// written to round exactly as the Go reference (inference/quant, inference/backend/ref)
// does; the kernels are compiled with -fmad=false so that no multiply-add is fused.
#pragma once
#include <cuda_fp16.h>
#include <stdint.h>

typedef long long i64;

// EM_SM90 is 1 where Hopper's instructions may be used: the committed PTX (sm_90) and the
// host pass. The compatibility PTX for compute capability 8.x (Ampere, Ada: build/ptx-one.sh
// with SM=80, kernels/cuda/sm80) leaves out the kernels that need thread block clusters,
// and its pdl_wait is empty (the host launches no programmatic edges there).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define EM_SM90 1
#else
#define EM_SM90 0
#endif

// pdl_entry is the first statement of every kernel (but pdl_defer's, below). In a
// recorded graph a kernel may follow a programmatic edge (inference/backend/cuda/pdl.go):
// it is launched while the kernel before it finishes, and griddepcontrol.wait holds it
// until that kernel has completed and its writes are visible, so nothing of it runs
// earlier. It then lets the next kernel be launched. Without such an edge both
// instructions do nothing.
__device__ void mvx_wait(unsigned n);  // build/micro/mvx.cuh
__device__ __forceinline__ void pdl_wait() {
    unsigned n;
    asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(n));
    if (n & 8) mvx_wait(n);
    else asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}
__device__ __forceinline__ void pdl_entry() { pdl_wait(); }

// pdl_defer opens a kernel that reads weights (device memory no kernel writes: uploaded
// once by Backend.Weight) or a step's positions, block tables and sequence rows (written
// by the host before the step's first kernel, never by a kernel) before it calls
// pdl_wait(), and nothing else before
// it: that work overlaps the end of the kernel before. A kernel starts only once the
// one before it has passed its own wait, so every kernel before that one has completed,
// and the host's copies before them. pdl_defer does nothing itself; it marks the kernel
// for the tests (kernels/cuda/pdl_test.go).
__device__ __forceinline__ void pdl_defer() {}

// ggml type ids (inference/quant.Type).
#define T_F32 0
#define T_F16 1
#define T_Q4_0 2
#define T_Q4_1 3
#define T_Q5_0 6
#define T_Q5_1 7
#define T_Q8_0 8
#define T_Q2_K 10
#define T_Q3_K 11
#define T_Q4_K 12
#define T_Q5_K 13
#define T_Q6_K 14
#define T_BF16 30

__device__ __forceinline__ float h2f(uint16_t h) { return __half2float(__ushort_as_half(h)); }
// f2h rounds to the nearest half, ties to even (quant.FP32ToFP16).
__device__ __forceinline__ uint16_t f2h(float f) { return __half_as_ushort(__float2half_rn(f)); }
__device__ __forceinline__ float bf2f(uint16_t h) { return __uint_as_float((uint32_t)h << 16); }
// f2bf is quant.FP32ToBF16.
__device__ __forceinline__ uint16_t f2bf(float f) {
    uint32_t u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
// ld16 reads an aligned little-endian half at p (p must be 2-byte aligned).
__device__ __forceinline__ float ldh(const uint8_t* p) { return h2f(*(const uint16_t*)p); }

// getScaleMinK4 of inference/quant: the 6-bit scale and min of sub-block j of a
// Q4_K/Q5_K block's 12 scale bytes.
__device__ __forceinline__ void scale_min_k4(int j, const uint8_t* q, int* sc, int* m) {
    if (j < 4) {
        *sc = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *sc = (q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4);
        *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

// q3 scale j of a Q3_K block (12 scale bytes), with the +32 offset removed.
__device__ __forceinline__ int q3_scale(int j, const uint8_t* s) {
    int low = j < 8 ? (s[j] & 0x0f) : (s[j - 8] >> 4);
    int high = (s[8 + (j % 4)] >> (2 * (j / 4))) & 3;
    return (int)(int8_t)(uint8_t)(low | (high << 4)) - 32;
}

__device__ __forceinline__ int q2_at(const uint8_t* qs, int i) {
    int h = i / 128, s = (i % 128) / 32, l = i % 32;
    return (qs[32 * h + l] >> (2 * s)) & 3;
}

__device__ __forceinline__ int q3_at(const uint8_t* hmask, const uint8_t* qs, int i) {
    int q = q2_at(qs, i);
    if ((hmask[i % 32] & (1 << (i / 32))) == 0) q -= 4;
    return q;
}

__device__ __forceinline__ int q4k_at(const uint8_t* qs, int i) {
    int c = i / 64, hi = (i / 32) % 2, l = i % 32;
    return (qs[32 * c + l] >> (4 * hi)) & 0x0f;
}

__device__ __forceinline__ int q5k_at(const uint8_t* qh, const uint8_t* qs, int i) {
    int q = q4k_at(qs, i);
    if (qh[i % 32] & (1 << (i / 32))) q += 16;
    return q;
}

__device__ __forceinline__ int q6_at(const uint8_t* ql, const uint8_t* qh, int i) {
    int h = i / 128, s = (i % 128) / 32, l = i % 32;
    int lo = (ql[64 * h + 32 * (s % 2) + l] >> (4 * (s / 2))) & 0x0f;
    int hi = (qh[32 * h + l] >> (2 * s)) & 3;
    return lo | (hi << 4);
}

// Layouts on the device. Weights keep their GGUF block layout, except Q8_0 and Q6_K,
// which are repacked per row (same bytes, rows padded to 16) so that the quants are
// 16-byte aligned:
//   Q8_0 row of nb blocks: qs[32*nb] | d f16[nb]
//   Q6_K row of nb blocks: ql[128*nb] | qh[64*nb] | scales int8[16*nb] | d f16[nb]
//
// Quantized activation rows (the dot partners), each row 16-byte aligned:
//   Q8_0: qs int8[K] | d f32[K/32] (the f16-rounded scale)
//   Q8_1: qs int8[K] | d f32[K/32] | s f32[K/32] (both f16-rounded)
//   Q8_K: qs int8[K] | d f32[K/256] (padded to 16 bytes) | bsums i32[K/16] at Q8K_BSUMS(K)
//   F16/BF16: 2-byte values; F32: a copy of x.

// Q8K_BSUMS is the byte offset of the bsums in a Q8_K activation row of K elements.
#define Q8K_BSUMS(K) ((K) + ((4 * ((K) / 256) + 15) & ~15))

// deq returns element j of a row of type T with nb blocks (GetRows), rounding exactly
// as quant.Dequantize.
template <int T>
__device__ __forceinline__ float deq(const uint8_t* row, int j, int nb) {
    if (T == T_F32) return ((const float*)row)[j];
    if (T == T_F16) return h2f(((const uint16_t*)row)[j]);
    if (T == T_BF16) return bf2f(((const uint16_t*)row)[j]);
    if (T == T_Q8_0) {
        return (float)(int)(int8_t)row[j] * ldh(row + 32 * nb + 2 * (j / 32));
    }
    if (T == T_Q6_K) {
        int ib = j / 256, p = j % 256;
        int q = q6_at(row + 128 * ib, row + 128 * nb + 64 * ib, p) - 32;
        float d = ldh(row + 208 * nb + 2 * ib);
        float sc = (float)(int)(int8_t)row[192 * nb + 16 * ib + p / 16];
        return d * sc * (float)q;
    }
    if (T == T_Q4_0 || T == T_Q4_1 || T == T_Q5_0 || T == T_Q5_1) {
        const int bsz = T == T_Q4_0 ? 18 : T == T_Q4_1 ? 20 : T == T_Q5_0 ? 22 : 24;
        int ib = j / 32, e = j % 32;
        const uint8_t* b = row + bsz * ib;
        float d = ldh(b);
        const uint8_t* qs = b + (T == T_Q4_0 ? 2 : T == T_Q4_1 ? 4 : T == T_Q5_0 ? 6 : 8);
        int q = e < 16 ? (qs[e] & 0x0f) : (qs[e - 16] >> 4);
        if (T == T_Q5_0 || T == T_Q5_1) {
            const uint8_t* h = b + (T == T_Q5_0 ? 2 : 4);
            uint32_t qh = (uint32_t)h[0] | ((uint32_t)h[1] << 8) | ((uint32_t)h[2] << 16) | ((uint32_t)h[3] << 24);
            q |= ((qh >> e) & 1) << 4;
        }
        if (T == T_Q4_0) return (float)(q - 8) * d;
        if (T == T_Q5_0) return (float)(q - 16) * d;
        float m = ldh(b + 2);
        return (float)q * d + m;
    }
    int ib = j / 256, p = j % 256;
    if (T == T_Q2_K) {
        const uint8_t* b = row + 84 * ib;
        int sc = b[p / 16];
        float dl = ldh(b + 80) * (float)(sc & 0x0f);
        float ml = ldh(b + 82) * (float)(sc >> 4);
        return dl * (float)q2_at(b + 16, p) - ml;
    }
    if (T == T_Q3_K) {
        const uint8_t* b = row + 110 * ib;
        float dl = ldh(b + 108) * (float)q3_scale(p / 16, b + 96);
        return dl * (float)q3_at(b, b + 32, p);
    }
    if (T == T_Q4_K || T == T_Q5_K) {
        const uint8_t* b = row + (T == T_Q4_K ? 144 : 176) * ib;
        int sc, m;
        scale_min_k4(p / 32, b + 4, &sc, &m);
        float d1 = ldh(b) * (float)sc;
        float m1 = ldh(b + 2) * (float)m;
        int q = T == T_Q4_K ? q4k_at(b + 16, p) : q5k_at(b + 16, b + 48, p);
        return d1 * (float)q - m1;
    }
    return __int_as_float(0x7fc00000);
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ double warp_sumd(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
// rms_scale is RMSNorm's scale 1/sqrt(mean + eps) for n values whose squares' double sums
// are part[0..np), summed in index order, with the CPU reference's roundings (the mean
// rounded to float, the root taken in double), so that every norm kernel has its bits.
__device__ __forceinline__ float rms_scale(const double* part, int np, int n, float eps) {
    double ss = 0;
    for (int k = 0; k < np; k++) ss += part[k];
    const float mean = (float)(ss / (double)n);
    return (float)(1.0 / sqrt((double)(mean + eps)));
}
__device__ __forceinline__ int warp_sumi(int v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// q8_quant_lane rounds a lane's value v of 32-element block ib of a row of k elements to
// Q8_0 (s1: Q8_1, the block's sum times d too) as quantize_row_q8_0 does: the block is
// one whole warp's values in lane order, and every lane of the warp calls it.
__device__ __forceinline__ void q8_quant_lane(float v, uint8_t* row, int ib, int k, int s1) {
    const int lane = threadIdx.x & 31;
    const float amax = warp_max(fabsf(v));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const int q = (int)(int8_t)(int)roundf(v * id);
    row[ib * 32 + lane] = (uint8_t)(int8_t)q;
    const int sum = warp_sumi(q);
    if (lane == 0) {
        float* ds = (float*)(row + k);
        ds[ib] = h2f(f2h(d));
        if (s1) ds[k / 32 + ib] = h2f(f2h((float)sum * d));
    }
}

// Q8_K rounding (quantize_row_q8_K_ref): in a block whose value of largest magnitude (the
// first on ties; NaN never) is x, of magnitude a (a <= 0: all zero or NaN), iscale =
// -127/x, each q = min(127, nearest_int(iscale*v)) (q8k_q; 0 where a <= 0), d = 1/iscale.
// q8k_first reports whether candidate (a2, i2) beats (a, i) for the largest magnitude.
__device__ __forceinline__ bool q8k_first(float a2, int i2, float a, int i) { return a2 > a || (a2 == a && i2 < i); }
__device__ __forceinline__ float q8k_iscale(float a, float x) { return a > 0.0f ? -127.0f / x : 0.0f; }
__device__ __forceinline__ float q8k_d(float a, float iscale) { return a > 0.0f ? 1.0f / iscale : 0.0f; }
__device__ __forceinline__ int q8k_q(float a, float iscale, float v) {
    if (!(a > 0.0f)) return 0;
    const float f = iscale * v + 12582912.0f;
    return min(127, (__float_as_int(f) & 0x007fffff) - 0x00400000);
}

// q8k_quant_in quantizes one 256-element block, one value per thread t of a group of 256
// threads (whole warps; every thread of the CUDA block calls it together, as it
// synchronizes the block), into row (the Q8_K activation layout): quantize_row_q8_K_ref,
// iscale = -127/max (max: the signed value of largest magnitude, the first on ties),
// q = min(127, nearest_int(iscale*x)), d = 1/iscale. sa[8], si[8] and sv[256] are the
// group's shared arrays; a group that is not on (past the row's blocks) only takes part
// in the barriers. With hrow, the rounded value d*q also goes to hrow[256 ib + t] in f16,
// as act_f16 (dequant.cu) would write it from the Q8_K row (cuBLASLt's activation rows).
__device__ __forceinline__ void q8k_quant_in(float v, uint8_t* row, int ib, int k, int t, float* sa, int* si, float* sv,
                                             bool on, uint16_t* hrow = nullptr) {
    const int lane = t & 31, w = t >> 5;
    __syncthreads();  // an earlier block's use of the shared arrays is over
    sv[t] = v;
    float a = fabsf(v);
    if (a != a) a = -1.0f;  // NaN never wins
    int idx = t;
    for (int o = 16; o > 0; o >>= 1) {
        float a2 = __shfl_xor_sync(0xffffffffu, a, o);
        int i2 = __shfl_xor_sync(0xffffffffu, idx, o);
        if (q8k_first(a2, i2, a, idx)) { a = a2; idx = i2; }
    }
    if (lane == 0) { sa[w] = a; si[w] = idx; }
    __syncthreads();
    a = sa[0]; idx = si[0];
    for (int j = 1; j < 8; j++)
        if (q8k_first(sa[j], si[j], a, idx)) { a = sa[j]; idx = si[j]; }
    float* dd = (float*)(row + k);
    int* bsums = (int*)(row + Q8K_BSUMS(k));
    const float iscale = q8k_iscale(a, a > 0.0f ? sv[idx] : 0.0f);
    const int q = q8k_q(a, iscale, v);
    const float d = q8k_d(a, iscale);
    int s = q;
    for (int o = 8; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (!on) return;
    row[ib * 256 + t] = (uint8_t)(int8_t)q;
    if (hrow) hrow[ib * 256 + t] = f2h(d * (float)(int8_t)q);
    if ((t & 15) == 0) bsums[ib * 16 + t / 16] = s;
    if (t == 0) dd[ib] = d;
}

// q8k_quant_warp rounds one 256-element block ib of a row to Q8_K as q8k_quant_in does,
// by one warp alone, lane l holding elements 8l .. 8l+7 (v): the largest magnitude (the
// first on ties, NaN never) found by shuffles with no shared memory and no barrier, the
// quants written 8 bytes a lane and each 16 elements' sum from a pair of lanes. At 64
// rows of 14,336 (a batch's SwiGLU) a block a 256-element block with two barriers took
// ~12 us on the H200. With hrow, each rounded value d*q also goes there in f16, as
// act_f16 (dequant.cu) would write it from the Q8_K row (cuBLASLt's activation rows).
__device__ __forceinline__ void q8k_quant_warp(const float v[8], uint8_t* row, int ib, int k, uint16_t* hrow = nullptr) {
    const int lane = threadIdx.x & 31;
    float a = -2.0f, x = 0.0f;
    int idx = 0;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        float m = fabsf(v[i]);
        if (m != m) m = -1.0f;
        if (m > a) { a = m; idx = 8 * lane + i; x = v[i]; }
    }
    for (int o = 16; o > 0; o >>= 1) {
        const float a2 = __shfl_xor_sync(0xffffffffu, a, o), x2 = __shfl_xor_sync(0xffffffffu, x, o);
        const int i2 = __shfl_xor_sync(0xffffffffu, idx, o);
        if (q8k_first(a2, i2, a, idx)) { a = a2; idx = i2; x = x2; }
    }
    const float iscale = q8k_iscale(a, x), d = q8k_d(a, iscale);
    uint32_t p[2] = {0, 0};
    int s = 0;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const int q = q8k_q(a, iscale, v[i]);
        s += q;
        p[i / 4] |= (uint32_t)(q & 255) << (8 * (i % 4));
    }
    *(uint2*)(row + ib * 256 + 8 * lane) = make_uint2(p[0], p[1]);
    if (hrow) {
        uint32_t h[4];
#pragma unroll
        for (int i = 0; i < 4; i++)
            h[i] = f2h(d * (float)(int8_t)(p[i / 2] >> (16 * (i % 2)))) |
                   ((uint32_t)f2h(d * (float)(int8_t)(p[i / 2] >> (16 * (i % 2) + 8))) << 16);
        *(uint4*)(hrow + ib * 256 + 8 * lane) = make_uint4(h[0], h[1], h[2], h[3]);
    }
    s += __shfl_xor_sync(0xffffffffu, s, 1);
    if ((lane & 1) == 0) ((int*)(row + Q8K_BSUMS(k)))[ib * 16 + lane / 2] = s;
    if (lane == 0) ((float*)(row + k))[ib] = d;
}

// ---- attention helpers (attention.cu, attention_split.cu) ----

#define MAX_HEAD 576  // the widest K or V head: MLA's latent row (64 rope + 512 latent dims)
#define GQA_MAX 8     // query heads per KV head that the grouped kernels take
#define GQA_HEAD 128  // the widest head attention_gqa takes

// cache_row is the cache row of position t of a sequence whose block table row is tab
// (blocks of bs rows), or row t without a table.
__device__ __forceinline__ i64 cache_row(const int* tab, int bs, int t) {
    return tab ? (i64)tab[t / bs] * bs + t % bs : (i64)t;
}

// attention_smem and the split kernels: threads a block, and the partial-sum floats per
// head (P * vhd <= 256 / (vhd/8) * vhd).
#define SM_THREADS 256
#define SM_PART 2048  // partial-sum floats per head (P * vhd <= 256 / (vhd/8) * vhd)
__device__ __forceinline__ float block_max(float v, float* red) {
    v = warp_max(v);
    __syncthreads();
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
    __syncthreads();
    float r = red[0];
    for (int j = 1; j < SM_THREADS / 32; j++) r = fmaxf(r, red[j]);
    return r;
}
__device__ __forceinline__ float block_sum(float v, float* red) {
    v = warp_sum(v);
    __syncthreads();
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
    __syncthreads();
    float r = 0;
    for (int j = 0; j < SM_THREADS / 32; j++) r += red[j];
    return r;
}

__device__ __forceinline__ void unpack8(uint4 raw, float* f) {
    const uint32_t w4[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int j = 0; j < 4; j++) {
        f[2 * j] = h2f(w4[j] & 0xffff);
        f[2 * j + 1] = h2f(w4[j] >> 16);
    }
}


// Tensor-core attention helpers (attention_tc.cu, attention_dec.cu).

// i2h is integer x in f16 (exact where |x| <= 2048, or x a multiple of 64 within +-65504);
// h2pack puts two f16 in one register, lo at the lower k.
__device__ __forceinline__ uint32_t i2h(int x) { return __half_as_ushort(__int2half_rn(x)); }
__device__ __forceinline__ uint32_t h2pack(uint32_t lo, uint32_t hi) { return lo | hi << 16; }

// tc_mma: c += a * b, f16 inputs, f32 accumulators (A 16x16 row-major, B 16x8).
__device__ __forceinline__ void tc_mma(float* c, const uint32_t* a, uint32_t b0, uint32_t b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// tc_ldsm loads four 8x8 matrices of halves from shared memory (lanes 8j..8j+7 give the
// row addresses of matrix j); tc_ldsm_t loads them transposed; the _at forms take a
// shared-space address (attention_dec.cuh keeps its tiles' addresses so).
__device__ __forceinline__ void tc_ldsm_at(uint32_t* r, uint32_t a) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
}
__device__ __forceinline__ void tc_ldsm(uint32_t* r, const void* p) { tc_ldsm_at(r, (uint32_t)__cvta_generic_to_shared(p)); }

__device__ __forceinline__ void tc_ldsm_t_at(uint32_t* r, uint32_t a) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
}
__device__ __forceinline__ void tc_ldsm_t(uint32_t* r, const void* p) { tc_ldsm_t_at(r, (uint32_t)__cvta_generic_to_shared(p)); }

// tc_cp16 copies 16 bytes from global to shared memory asynchronously, or writes zeros
// when !ok (src must still be a valid address).
__device__ __forceinline__ void tc_cp16(void* dst, const void* src, bool ok) {
    const uint32_t d = (uint32_t)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src), "r"(ok ? 16 : 0) : "memory");
}

__device__ __forceinline__ void tc_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }

__device__ __forceinline__ void tc_wait1() { asm volatile("cp.async.wait_group 1;" ::: "memory"); }

// tc_off is the byte offset of 16-byte chunk c of row r in a tile of rows of D halves:
// the low three bits of the chunk index are XORed with r%8, so that 8 consecutive rows
// at one chunk lie in distinct banks.
template <int D>
__device__ __forceinline__ int tc_off(int r, int c) {
    return r * (2 * D) + ((c ^ (r & 7)) << 4);
}

__device__ __forceinline__ i64 tc_row(const int* tab, int bs, int t) {
    return tab ? (i64)tab[t / bs] * bs + t % bs : (i64)t;
}

// part_sum is p[0] + p[stride] + ... + p[(n-1) stride] in that order, read from L2
// (other blocks wrote them), eight loads in flight at a time.
__device__ __forceinline__ float part_sum(const float* p, i64 stride, int n) {
    float s = 0;
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        float x[8];
#pragma unroll
        for (int u = 0; u < 8; u++) x[u] = __ldcg(p + (i64)(j + u) * stride);
#pragma unroll
        for (int u = 0; u < 8; u++) s += x[u];
    }
    for (; j < n; j++) s += __ldcg(p + (i64)j * stride);
    return s;
}

// cluster_sync is a barrier of a thread block cluster's blocks (every thread of each
// calls it): their shared memory writes before it are seen by their reads after it.
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// cluster_ld reads the f32 at p, an address in this block's shared memory, in the shared
// memory of the cluster's block of rank r (distributed shared memory).
__device__ __forceinline__ float cluster_ld(const void* p, int r) {
    uint32_t a = (uint32_t)__cvta_generic_to_shared(p), ra;
    float v;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(ra) : "r"(a), "r"(r));
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(ra) : "memory");
    return v;
}

// tc_prob is a score's probability rounded to f16, as the reference rounds it.
__device__ __forceinline__ uint32_t tc_prob(float s, float m, float inv) { return f2h(expf(s - m) * inv); }

