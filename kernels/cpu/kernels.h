// kernels.h: the C kernels behind package kernels/cpu.
//
// Contract for every function: pointers are valid for the sizes given (the Go wrappers
// check bounds before calling), nothing is allocated, nothing is kept after return, and
// no pointer is written outside the ranges described. Each entry point takes the
// instruction-set path chosen once at start (EMBER_ISA_*) and dispatches on it; a path the
// file does not implement falls back to that file's scalar C code.
#ifndef EMBER_KERNELS_H
#define EMBER_KERNELS_H

#include <stdint.h>

enum {
	EMBER_ISA_SCALAR = 0,
	EMBER_ISA_AVX2 = 1,       // AVX2 + FMA + F16C
	EMBER_ISA_AVX512 = 2,     // AVX-512 F/BW/VL (+ AVX2 paths)
	EMBER_ISA_AVX512VNNI = 3, // AVX512 + VNNI
	EMBER_ISA_NEON = 4,       // aarch64 Advanced SIMD (+ dotprod where compiled in)
	EMBER_ISA_AVX2VNNI = 5,   // AVX2 + AVX-VNNI: taken only by ember_gemm_kq and ember_gemm_lg
	                          // (the quantized batches); the rest of the path is AVX2's
};

// ggml type ids, as stored in GGUF.
enum {
	EMBER_F32 = 0, EMBER_F16 = 1, EMBER_Q4_0 = 2, EMBER_Q4_1 = 3, EMBER_Q5_0 = 6,
	EMBER_Q5_1 = 7, EMBER_Q8_0 = 8, EMBER_Q8_1 = 9, EMBER_Q2_K = 10, EMBER_Q3_K = 11,
	EMBER_Q4_K = 12, EMBER_Q5_K = 13, EMBER_Q6_K = 14, EMBER_Q8_K = 15, EMBER_BF16 = 30,
};

// ---- matrix products (kq.c: the K-quants; lg.c: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, F16, BF16, F32)

// Quantize nrows rows of n floats (x, rows contiguous) to the activation type vdt, rows
// packed contiguously in y (each row exactly the row size of n elements of vdt).
// kq.c handles vdt Q8_K; lg.c handles Q8_0, Q8_1, F16, BF16, F32.
// Returns 0, or -1 when vdt is not handled by that file. The bytes must equal the scalar
// reference (package quant), except F32 which is a copy.
int ember_quantize_rows_kq(int isa, int vdt, const float *x, void *y, int64_t nrows, int64_t n);
int ember_quantize_rows_lg(int isa, int vdt, const float *x, void *y, int64_t nrows, int64_t n);

// Matrix product of weights w (rows of k elements of type wtype, wrb bytes apart) with nx
// activation rows xq (already quantized to wtype's dot partner, xrb bytes apart):
//   for i in [0, nx), r in [r0, r1): dst[i*ldd + r] = dot(w row r, xq row i)
// with the value of llama.cpp's vec_dot for that pair (rounding order may differ).
// Returns 0, or -1 when wtype is not handled by that file.
int ember_gemm_kq(int isa, int wtype, const void *w, int64_t wrb, const void *xq, int64_t xrb,
                  int64_t nx, int64_t k, int64_t r0, int64_t r1, float *dst, int64_t ldd);
int ember_gemm_lg(int isa, int wtype, const void *w, int64_t wrb, const void *xq, int64_t xrb,
                  int64_t nx, int64_t k, int64_t r0, int64_t r1, float *dst, int64_t ldd);
// ember_gemm_bf16 is ember_gemm_lg for BF16 weights on AVX512_BF16 (vdpbf16ps), for CPUs
// that have it (the caller checks); -1 where it is not compiled in or k is 0.
int ember_gemm_bf16(const void *w, int64_t wrb, const void *xq, int64_t xrb, int64_t nx, int64_t k, int64_t r0,
                    int64_t r1, float *dst, int64_t ldd);

// Dequantize one row of n elements of type t into y. Returns 0, or -1 when t is not
// handled by that file.
int ember_dequantize_row_kq(int isa, int t, const void *x, float *y, int64_t n);
int ember_dequantize_row_lg(int isa, int t, const void *x, float *y, int64_t n);

// ---- row-wise ops (elem.c). All over one row of n floats; y may alias an input.

// y = x / sqrt(mean(x^2) + eps) * w   (mean accumulated in double)
void ember_rmsnorm(int isa, const float *x, const float *w, float *y, int64_t n, float eps);
void ember_add(int isa, const float *a, const float *b, float *y, int64_t n);
void ember_mul(int isa, const float *a, const float *b, float *y, int64_t n);
// y = silu(g) * u, silu(x) = x / (1 + exp(-x)); exp accurate to a few ulp.
void ember_swiglu(int isa, const float *g, const float *u, float *y, int64_t n);
// IEEE half conversions, round to nearest even (F16C where present).
void ember_f32_to_f16(int isa, const float *x, uint16_t *y, int64_t n);
void ember_f16_to_f32(int isa, const uint16_t *x, float *y, int64_t n);
// Rotate, in place, every head of one row x of nheads*head_dim floats: the first dims
// dims of each head, pairs (2i, 2i+1) (neox == 0) or (i, i + dims/2) (neox != 0), by the
// angle whose cos and sin are cs[2i] and cs[2i+1]:
//   x0' = x0*c - x1*s; x1' = x0*s + x1*c
void ember_rope(int isa, float *x, int64_t nheads, int64_t head_dim, int64_t dims, int neox,
                const float *cs);
// Attention of one query head over n_kv cached positions, as llama.cpp computes it:
// q (head_dim floats) is rounded to f16; s_t = scale * dot(q, k_t) with k_t the f16 row
// at k + r_t*k_stride (elements), r_t = rows[t] when rows is not NULL (a paged cache),
// else t; p = softmax(s) (max-subtracted, sum in double); p_t
// rounded to f16; out = sum_t p_t * v_t with v_t at v + r_t*v_stride (v_head_dim elements).
// scratch holds at least n_kv + head_dim floats.
void ember_attention(int isa, const float *q, const uint16_t *k, int64_t k_stride,
                     const uint16_t *v, int64_t v_stride, const int32_t *rows, int64_t n_kv, int64_t head_dim,
                     int64_t v_head_dim, float scale, float *out, float *scratch);
// ember_attention for the g query heads (1 <= g <= EMBER_GQA_MAX) that share one KV head
// (grouped-query attention), reading each K and V row once for all of them: q holds the
// g heads one after another (g*head_dim floats), out receives head i's output at
// out + i*v_head_dim. Every head's output has the bits of an ember_attention call on it
// (same isa). scratch holds at least g*(n_kv + head_dim) floats.
#define EMBER_GQA_MAX 8
void ember_attention_group(int isa, const float *q, int64_t g, const uint16_t *k, int64_t k_stride,
                           const uint16_t *v, int64_t v_stride, const int32_t *rows, int64_t n_kv,
                           int64_t head_dim, int64_t v_head_dim, float scale, float *out, float *scratch);

// ember_attention_group in phases that callers may split among threads, with the same
// bits per head (an ember_attention call on it, same isa), for the g (1 <=
// g <= EMBER_ATTN_SPLIT_MAX) query heads of one KV head (DeepSeek's latent attention:
// 16 heads over one 576-value row):
//   ember_attn_q16: q16[0..n) = q rounded to f16 (the g heads, head_dim apart);
//   ember_attn_scores: s[i*n_kv + t] = scale * dot(head i of q16, K row t) for t in
//     [t0, t1) (t0 a multiple of 4);
//   ember_attn_probs: one head's s[0..n_kv) in place to its probabilities (f16-rounded);
//   ember_attn_values: out[i*ostride + c] = sum over t of s[i*n_kv + t] * V row t [c],
//     for the columns c in [c0, c1) (c0 a multiple of 8; c1 too, or v_head_dim).
#define EMBER_ATTN_SPLIT_MAX 32
void ember_attn_q16(int isa, const float *q, int64_t n, float *q16);
void ember_attn_scores(int isa, const float *q16, int64_t g, const uint16_t *k, int64_t k_stride, const int32_t *rows,
                       int64_t t0, int64_t t1, int64_t n_kv, int64_t head_dim, float scale, float *s);
void ember_attn_probs(int isa, float *s, int64_t n_kv);
void ember_attn_values(int isa, const float *s, int64_t g, int64_t n_kv, const uint16_t *v, int64_t v_stride,
                       const int32_t *rows, int64_t v_head_dim, int64_t c0, int64_t c1, float *out, int64_t ostride);

#endif
