// attnq8.h: attention of one query head over a Q8_0 KV cache (attnq8*.c). The first
// declaration is part of the contract, in the terms of kernels.h; the rest are internals
// of attnq8*.c, not visible to Go.
#ifndef EMBER_ATTNQ8_H
#define EMBER_ATTNQ8_H

#include <stdint.h>

// Attention of one query head over n_kv cached positions whose K and V rows are Q8_0
// (blocks of 34 bytes: f16 scale d, then 32 int8 quants; value = d*q), as llama.cpp's
// flash attention computes it over a q8_0 cache (up to summation order):
//   q (head_dim floats) is rounded to Q8_0 exactly as quantize_row_q8_0_ref (d = amax/127
//   rounded to f16, quants roundf(x/d)); s_t = scale * sum over blocks, in order, of
//   isum_b * (dK_b * dQ_b) (ggml_vec_dot_q8_0_q8_0) with k_t the row at
//   k + r_t*k_stride (BYTES), r_t = rows[t] when rows is not NULL (a paged cache), else t;
//   p = softmax(s) (max-subtracted, sum in double; p_t stays f32, unlike
//   ember_attention); out = sum_t p_t * v_t with v_t the dequantized row at
//   v + r_t*v_stride (bytes, v_head_dim elements).
// head_dim and v_head_dim are positive multiples of 32. scratch holds at least
// n_kv + head_dim floats (the scores, then q's scales and quants).
void ember_attention_q8(int isa, const float *q, const void *k, int64_t k_stride, const void *v,
                        int64_t v_stride, const int32_t *rows, int64_t n_kv, int64_t head_dim,
                        int64_t v_head_dim, float scale, float *out, float *scratch);
// ember_attention_q8 for the g query heads (1 <= g <= EMBER_GQA_MAX, kernels.h) that share
// one KV head, reading each K and V row once for all of them, with the layout of q and
// out of ember_attention_group; every head's output has the bits of an
// ember_attention_q8 call on it (same isa). scratch holds at least g*(n_kv + head_dim)
// floats.
void ember_attention_q8_group(int isa, const float *q, int64_t g, const void *k, int64_t k_stride,
                              const void *v, int64_t v_stride, const int32_t *rows, int64_t n_kv,
                              int64_t head_dim, int64_t v_head_dim, float scale, float *out, float *scratch);

// ---- internals

// Bytes of a Q8_0 block.
#define AQ8_BLOCK 34

// Round q (head_dim floats) to Q8_0: dq[b] the f16 scale of block b widened to float,
// qq its quants. Every path uses this code, so they all see the same q.
void attnq8_scalar(const float *q, const uint8_t *k, int64_t k_stride, const uint8_t *v, int64_t v_stride,
                   const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim, float scale,
                   float *out, float *scratch);
void attnq8_avx2(const float *q, const uint8_t *k, int64_t k_stride, const uint8_t *v, int64_t v_stride,
                 const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim, float scale,
                 float *out, float *scratch);
// attnq8_avx512 and attnq8_group_avx512 form the int8 products with AVX-512 VNNI when
// vnni != 0 (EMBER_ISA_AVX512VNNI), else with AVX-512BW.
void attnq8_avx512(int vnni, const float *q, const uint8_t *k, int64_t k_stride, const uint8_t *v, int64_t v_stride,
                   const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim, float scale,
                   float *out, float *scratch);
void attnq8_neon(const float *q, const uint8_t *k, int64_t k_stride, const uint8_t *v, int64_t v_stride,
                 const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim, float scale,
                 float *out, float *scratch);

// The scratch of every path (attnq8.c; g = 1 for one head): s the scores of head i at
// s + i*n_kv, then the scales (head i's at dq + i*head_dim/32) and quants
// (qq + i*head_dim) of q.
typedef struct {
	float *s, *dq;
	int8_t *qq;
} aq8_scratch;

// Lay out scratch for g heads (1: the single-head paths) and round the heads of q into it.
aq8_scratch attnq8_prepare(const float *q, int64_t g, int64_t n_kv, int64_t head_dim, float *scratch);

// The grouped paths (g heads).
void attnq8_group_scalar(const float *q, int64_t g, const uint8_t *k, int64_t k_stride, const uint8_t *v,
                         int64_t v_stride, const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim,
                         float scale, float *out, float *scratch);
void attnq8_group_avx2(const float *q, int64_t g, const uint8_t *k, int64_t k_stride, const uint8_t *v,
                       int64_t v_stride, const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim,
                       float scale, float *out, float *scratch);
void attnq8_group_avx512(int vnni, const float *q, int64_t g, const uint8_t *k, int64_t k_stride, const uint8_t *v,
                         int64_t v_stride, const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim,
                         float scale, float *out, float *scratch);
void attnq8_group_neon(const float *q, int64_t g, const uint8_t *k, int64_t k_stride, const uint8_t *v,
                       int64_t v_stride, const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim,
                       float scale, float *out, float *scratch);

#ifdef EMBER_ELEM_H // attnq8*.c include elem.h first
// elem_prefetch_k for a Q8_0 cache: prefetch the K rows (kbytes bytes each, k_stride BYTES
// apart) of the n positions ELEM_KPF on from t, when they fall before end. The score loops
// of the AVX2 and AVX-512 kernels call it (BenchmarkAttentionGroup's Q8_0 kernels over a
// cold cache, nkv 1024 and 4096, g 4, on a Zen 5 VM: 8-44% less time; within the noise
// on a warm one).
static inline __attribute__((always_inline)) void aq8_prefetch_k(int64_t t, int n, int64_t end, const int32_t *rows,
                                                                 const uint8_t *k, int64_t k_stride, int64_t kbytes) {
	if (t + ELEM_KPF + n > end) return;
	for (int j = 0; j < n; j++) elem_prefetch(k + EROW(rows, t + ELEM_KPF + j) * k_stride, kbytes);
}
#endif

#endif
