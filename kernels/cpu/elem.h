// elem.h: internals of the row ops (elem*.c): the per-ISA entry points dispatched from
// elem.c. Not part of the contract (kernels.h).
#ifndef EMBER_ELEM_H
#define EMBER_ELEM_H

#include <stdint.h>
#include <math.h>
#include "lg.h"

// EROW is the cache row of position t: rows[t] with a row list (a paged cache), else t.
#define EROW(rows, t) ((rows) ? (int64_t)(rows)[(t)] : (int64_t)(t))

// The first steps of the softmax of the attention kernels over f16 (elem*.c) and Q8_0
// (attnq8*.c) caches, in place over the scores s[0..n), n > 0: m = max s, s[t] =
// exp(s[t] - m), and the returned inv = (float)(1/sum) with the sum of the exps in double.
// The caller forms p = s[t] * inv (rounded to f16 for an f16 cache).
float elem_softmax_exp_scalar(float *s, int64_t n);
float elem_softmax_exp_avx2(float *s, int64_t n);
float elem_softmax_exp_neon(float *s, int64_t n);

void elem_attention_scalar(const float *q, const uint16_t *k, int64_t k_stride, const uint16_t *v, int64_t v_stride, const int32_t *rows,
                           int64_t n_kv, int64_t head_dim, int64_t v_head_dim, float scale, float *out,
                           float *scratch);

// op: 0 add, 1 mul.
void elem_rmsnorm_avx2(const float *x, const float *w, float *y, int64_t n, float eps);
void elem_binary_avx2(int op, const float *a, const float *b, float *y, int64_t n);
void elem_swiglu_avx2(const float *g, const float *u, float *y, int64_t n);
void elem_swiglu_avx512(const float *g, const float *u, float *y, int64_t n);
void elem_f32_to_f16_avx2(const float *x, uint16_t *y, int64_t n);
void elem_f16_to_f32_avx2(const uint16_t *x, float *y, int64_t n);
void elem_rope_avx2(float *x, int64_t nheads, int64_t head_dim, int64_t dims, int neox, const float *cs);
void elem_attention_avx2(const float *q, const uint16_t *k, int64_t k_stride, const uint16_t *v, int64_t v_stride, const int32_t *rows,
                         int64_t n_kv, int64_t head_dim, int64_t v_head_dim, float scale, float *out,
                         float *scratch);

void elem_rmsnorm_neon(const float *x, const float *w, float *y, int64_t n, float eps);
void elem_binary_neon(int op, const float *a, const float *b, float *y, int64_t n);
void elem_swiglu_neon(const float *g, const float *u, float *y, int64_t n);
void elem_f32_to_f16_neon(const float *x, uint16_t *y, int64_t n);
void elem_f16_to_f32_neon(const uint16_t *x, float *y, int64_t n);
void elem_rope_neon(float *x, int64_t nheads, int64_t head_dim, int64_t dims, int neox, const float *cs);
void elem_attention_neon(const float *q, const uint16_t *k, int64_t k_stride, const uint16_t *v, int64_t v_stride, const int32_t *rows,
                         int64_t n_kv, int64_t head_dim, int64_t v_head_dim, float scale, float *out,
                         float *scratch);

#endif
