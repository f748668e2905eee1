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
float elem_softmax_exp_avx512(float *s, int64_t n);
float elem_softmax_exp_neon(float *s, int64_t n);

void elem_attention_scalar(const float *q, const uint16_t *k, int64_t k_stride, const uint16_t *v, int64_t v_stride, const int32_t *rows,
                           int64_t n_kv, int64_t head_dim, int64_t v_head_dim, float scale, float *out,
                           float *scratch);

// The grouped attention kernels (attngroup*.c, attnq8*.c) run through V elem_run
// positions at a time, about 16 KiB of V rows of vbytes bytes.
static inline int64_t elem_run(int64_t vbytes) {
	const int64_t r = 16384 / vbytes;
	return r < 16 ? 16 : r > 256 ? 256 : r;
}

// Prefetch the n > 0 bytes at p.
static inline __attribute__((always_inline)) void elem_prefetch(const void *p, int64_t n) {
	const char *c = (const char *)p;
	for (int64_t o = 0; o < n; o += 64) __builtin_prefetch(c + o);
	__builtin_prefetch(c + n - 1);
}

// ELEM_KPF is how many positions ahead the attention kernels' scores (grouped and
// single-head, f16 cache) prefetch the K rows (a decode row reads its cache once, cold:
// Llama-3.2-1B's generation after 4,096 tokens on a Zen 5 VM went from ~23 to ~31 tok/s
// with it, a 32-KV-head variant's after 2,048 from ~16.4 to ~18.3; 16 and 64 measured
// the same as 32).
#define ELEM_KPF 32

// elem_prefetch_k prefetches the K rows (kbytes bytes each, k_stride halves apart) of the
// four positions ELEM_KPF on from the block at t, when they fall before end.
static inline __attribute__((always_inline)) void elem_prefetch_k(int64_t t, int64_t end, const int32_t *rows,
                                                                  const uint16_t *k, int64_t k_stride, int64_t kbytes) {
	if (t + ELEM_KPF + 4 > end) return;
	for (int j = 0; j < 4; j++) elem_prefetch(k + EROW(rows, t + ELEM_KPF + j) * k_stride, kbytes);
}

// The grouped kernels prefetch the V rows of the next run while they run through one (the
// hardware prefetchers, which stop at page boundaries, fall behind them on a cold cache),
// and those of the first run while they compute the scores: at the block of the n
// positions from t, those of the block when it falls in the first run (rows vbytes bytes
// long, v_stride BYTES apart).
static inline void elem_prefetch_run(int64_t t, int n, int64_t n_kv, const int32_t *rows, const void *v,
                                     int64_t v_stride, int64_t vbytes) {
	if (t >= elem_run(vbytes)) return;
	for (int j = 0; j < n && t + j < n_kv; j++) elem_prefetch((const char *)v + EROW(rows, t + j) * v_stride, vbytes);
}

// The V step of the grouped kernels: out (g heads of vhd floats) = 0, then for each run
// of elem_run(vbytes) positions [t0, t1), run(H, s + i*n_kv, ..., out + i*vhd, vhd, pf)
// for the heads i four at a time (H of them), which adds p_i[t] v_t for t in the run to
// each head's out, and prefetches the rows of the next run (pf positions on) when pf != 0
// (the first heads of each run).
typedef void (*elem_vrun)(int H, const float *s, int64_t n_kv, const void *v, int64_t v_stride, const int32_t *rows,
                          int64_t t0, int64_t t1, float *out, int64_t vhd, int64_t pf);
static inline void elem_v_runs(elem_vrun run, int64_t g, const float *s, int64_t n_kv, const void *v,
                               int64_t v_stride, const int32_t *rows, float *out, int64_t vhd, int64_t vbytes) {
	memset(out, 0, (size_t)(g * vhd) * 4);
	const int64_t n = elem_run(vbytes);
	for (int64_t t0 = 0; t0 < n_kv; t0 += n) {
		const int64_t t1 = t0 + n < n_kv ? t0 + n : n_kv;
		for (int64_t i = 0; i < g; i += 4)
			run((int)(g - i < 4 ? g - i : 4), s + i * n_kv, n_kv, v, v_stride, rows, t0, t1, out + i * vhd, vhd, i ? 0 : n);
	}
}

#if defined(__aarch64__)
#include <arm_neon.h>
// The accumulators of a V tile of the grouped NEON kernels: acc[i*W + w] is out[i*vhd +
// 4w ..] (H heads of vhd floats, W vectors each).
static inline __attribute__((always_inline)) void en_tile_load(const int H, const int W, float32x4_t *acc,
                                                               const float *out, int64_t vhd) {
	LG_UNROLL
	for (int i = 0; i < H; i++) {
		LG_UNROLL
		for (int w = 0; w < W; w++) acc[i * W + w] = vld1q_f32(out + i * vhd + 4 * w);
	}
}

static inline __attribute__((always_inline)) void en_tile_store(const int H, const int W, const float32x4_t *acc,
                                                                float *out, int64_t vhd) {
	LG_UNROLL
	for (int i = 0; i < H; i++) {
		LG_UNROLL
		for (int w = 0; w < W; w++) vst1q_f32(out + i * vhd + 4 * w, acc[i * W + w]);
	}
}
#endif

// The phases of ember_attention_group, per ISA (attngroup*.c), behind ember_attn_* of
// kernels.h; the SIMD attn_scores also prefetch the V rows of the first run (v, rows
// v_bstride BYTES apart, vbytes long; v may be NULL).
void attn_q16_scalar(const float *q, int64_t n, float *q16);
void attn_q16_avx2(const float *q, int64_t n, float *q16);
void attn_q16_neon(const float *q, int64_t n, float *q16);
void attn_scores_scalar(const float *q16, int64_t g, const uint16_t *k, int64_t k_stride, const int32_t *rows,
                        int64_t t0, int64_t t1, int64_t n_kv, int64_t head_dim, float scale, float *s);
void attn_scores_avx2(const float *q16, int64_t g, const uint16_t *k, int64_t k_stride, const int32_t *rows,
                      int64_t t0, int64_t t1, int64_t n_kv, int64_t hd, float scale, float *s, const uint16_t *v,
                      int64_t v_bstride, int64_t vbytes);
void attn_scores_avx512(const float *q16, int64_t g, const uint16_t *k, int64_t k_stride, const int32_t *rows,
                        int64_t t0, int64_t t1, int64_t n_kv, int64_t hd, float scale, float *s, const uint16_t *v,
                        int64_t v_bstride, int64_t vbytes);
void attn_scores_neon(const float *q16, int64_t g, const uint16_t *k, int64_t k_stride, const int32_t *rows,
                      int64_t t0, int64_t t1, int64_t n_kv, int64_t hd, float scale, float *s, const uint16_t *v,
                      int64_t v_bstride, int64_t vbytes);
void attn_probs_scalar(float *s, int64_t n_kv);
void attn_probs_avx2(float *s, int64_t n_kv);
void attn_probs_avx512(float *s, int64_t n_kv);
void attn_probs_neon(float *s, int64_t n_kv);
void attn_values_scalar(const float *s, int64_t g, int64_t n_kv, const uint16_t *v, int64_t v_stride,
                        const int32_t *rows, int64_t c0, int64_t c1, float *out, int64_t ostride);
void attn_values_avx2(const float *s, int64_t g, int64_t n_kv, const uint16_t *v, int64_t v_stride,
                      const int32_t *rows, int64_t vhd, int64_t c0, int64_t c1, float *out, int64_t ostride);
void attn_values_avx512(const float *s, int64_t g, int64_t n_kv, const uint16_t *v, int64_t v_stride,
                        const int32_t *rows, int64_t vhd, int64_t c0, int64_t c1, float *out, int64_t ostride);
void attn_values_neon(const float *s, int64_t g, int64_t n_kv, const uint16_t *v, int64_t v_stride,
                      const int32_t *rows, int64_t vhd, int64_t c0, int64_t c1, float *out, int64_t ostride);

// ember_attention_group's paths (attngroup*.c); the scratch layout is attngroup.c's.
void attn_group_scalar(const float *q, int64_t g, const uint16_t *k, int64_t k_stride, const uint16_t *v,
                       int64_t v_stride, const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim,
                       float scale, float *out, float *scratch);
void attn_group_avx2(const float *q, int64_t g, const uint16_t *k, int64_t k_stride, const uint16_t *v,
                     int64_t v_stride, const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim,
                     float scale, float *out, float *scratch);
void attn_group_avx512(const float *q, int64_t g, const uint16_t *k, int64_t k_stride, const uint16_t *v,
                       int64_t v_stride, const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim,
                       float scale, float *out, float *scratch);
void attn_group_neon(const float *q, int64_t g, const uint16_t *k, int64_t k_stride, const uint16_t *v,
                     int64_t v_stride, const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim,
                     float scale, float *out, float *scratch);

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
void elem_attention_avx512(const float *q, const uint16_t *k, int64_t k_stride, const uint16_t *v, int64_t v_stride,
                           const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim, float scale,
                           float *out, float *scratch);

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
