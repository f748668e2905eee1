// attngroup.c: attention of the g query heads of one KV head over an f16 cache
// (ember_attention_group, see kernels.h): dispatch and the scalar C reference. The SIMD
// paths live in attngroup_avx2.c, attngroup_avx512.c (the AVX2 path's bits on 16-lane
// vectors) and attngroup_neon.c.
//
// scratch layout (floats): s[g*n_kv] the scores of head i at s + i*n_kv (then its p),
// then q16[g*head_dim] the heads of q rounded to f16; g*(n_kv + head_dim) floats in all.
#include "elem.h"

void attn_q16_scalar(const float *q, int64_t n, float *q16) {
	for (int64_t d = 0; d < n; d++) q16[d] = lg_h2f(lg_f2h(q[d]));
}

void attn_scores_scalar(const float *q16, int64_t g, const uint16_t *k, int64_t k_stride, const int32_t *rows,
                        int64_t t0, int64_t t1, int64_t n_kv, int64_t head_dim, float scale, float *s) {
	for (int64_t t = t0; t < t1; t++) {
		const uint16_t *kt = k + EROW(rows, t) * k_stride;
		for (int64_t i = 0; i < g; i++) {
			const float *qi = q16 + i * head_dim;
			float dot = 0;
			for (int64_t d = 0; d < head_dim; d++) dot += qi[d] * lg_h2f(kt[d]);
			s[i * n_kv + t] = scale * dot;
		}
	}
}

void attn_probs_scalar(float *s, int64_t n_kv) {
	const float inv = elem_softmax_exp_scalar(s, n_kv);
	for (int64_t t = 0; t < n_kv; t++) s[t] = lg_h2f(lg_f2h(s[t] * inv));
}

void attn_values_scalar(const float *s, int64_t g, int64_t n_kv, const uint16_t *v, int64_t v_stride,
                        const int32_t *rows, int64_t c0, int64_t c1, float *out, int64_t ostride) {
	for (int64_t i = 0; i < g; i++)
		for (int64_t d = c0; d < c1; d++) out[i * ostride + d] = 0;
	for (int64_t t = 0; t < n_kv; t++) {
		const uint16_t *vt = v + EROW(rows, t) * v_stride;
		for (int64_t i = 0; i < g; i++) {
			const float p = s[i * n_kv + t];
			float *o = out + i * ostride;
			for (int64_t d = c0; d < c1; d++) o[d] += p * lg_h2f(vt[d]);
		}
	}
}

void attn_group_scalar(const float *q, int64_t g, const uint16_t *k, int64_t k_stride, const uint16_t *v,
                       int64_t v_stride, const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim,
                       float scale, float *out, float *scratch) {
	float *s = scratch, *q16 = scratch + g * n_kv;
	attn_q16_scalar(q, g * head_dim, q16);
	attn_scores_scalar(q16, g, k, k_stride, rows, 0, n_kv, n_kv, head_dim, scale, s);
	for (int64_t i = 0; i < g; i++) attn_probs_scalar(s + i * n_kv, n_kv);
	attn_values_scalar(s, g, n_kv, v, v_stride, rows, 0, v_head_dim, out, v_head_dim);
}

#if defined(__x86_64__)
#define AG_X86(isa) ((isa) >= EMBER_ISA_AVX2 && (isa) <= EMBER_ISA_AVX512VNNI)
#define AG_X512(isa) ((isa) == EMBER_ISA_AVX512 || (isa) == EMBER_ISA_AVX512VNNI) // the AVX2 paths' bits
#endif

void ember_attention_group(int isa, const float *q, int64_t g, const uint16_t *k, int64_t k_stride,
                           const uint16_t *v, int64_t v_stride, const int32_t *rows, int64_t n_kv,
                           int64_t head_dim, int64_t v_head_dim, float scale, float *out, float *scratch) {
	if (n_kv <= 0 || g < 1 || g > EMBER_GQA_MAX || head_dim <= 0 || v_head_dim <= 0) return;
	if (g == 1) { // the single-head kernel is a little faster alone (no runs, no tiles)
		ember_attention(isa, q, k, k_stride, v, v_stride, rows, n_kv, head_dim, v_head_dim, scale, out, scratch);
		return;
	}
#if defined(__x86_64__)
	if (AG_X512(isa)) {
		attn_group_avx512(q, g, k, k_stride, v, v_stride, rows, n_kv, head_dim, v_head_dim, scale, out, scratch);
		return;
	}
	if (AG_X86(isa)) {
		attn_group_avx2(q, g, k, k_stride, v, v_stride, rows, n_kv, head_dim, v_head_dim, scale, out, scratch);
		return;
	}
#endif
#if defined(__aarch64__)
	if (isa == EMBER_ISA_NEON) {
		attn_group_neon(q, g, k, k_stride, v, v_stride, rows, n_kv, head_dim, v_head_dim, scale, out, scratch);
		return;
	}
#endif
	attn_group_scalar(q, g, k, k_stride, v, v_stride, rows, n_kv, head_dim, v_head_dim, scale, out, scratch);
}

void ember_attn_q16(int isa, const float *q, int64_t n, float *q16) {
#if defined(__x86_64__)
	if (AG_X86(isa)) {
		attn_q16_avx2(q, n, q16);
		return;
	}
#endif
#if defined(__aarch64__)
	if (isa == EMBER_ISA_NEON) {
		attn_q16_neon(q, n, q16);
		return;
	}
#endif
	attn_q16_scalar(q, n, q16);
}

void ember_attn_scores(int isa, const float *q16, int64_t g, const uint16_t *k, int64_t k_stride, const int32_t *rows,
                       int64_t t0, int64_t t1, int64_t n_kv, int64_t head_dim, float scale, float *s) {
	if (g < 1 || g > EMBER_ATTN_SPLIT_MAX || t0 < 0 || t0 % 4 || t1 > n_kv || t0 >= t1 || head_dim <= 0) return;
#if defined(__x86_64__)
	if (AG_X512(isa)) {
		attn_scores_avx512(q16, g, k, k_stride, rows, t0, t1, n_kv, head_dim, scale, s, 0, 0, 0);
		return;
	}
	if (AG_X86(isa)) {
		attn_scores_avx2(q16, g, k, k_stride, rows, t0, t1, n_kv, head_dim, scale, s, 0, 0, 0);
		return;
	}
#endif
#if defined(__aarch64__)
	if (isa == EMBER_ISA_NEON) {
		attn_scores_neon(q16, g, k, k_stride, rows, t0, t1, n_kv, head_dim, scale, s, 0, 0, 0);
		return;
	}
#endif
	attn_scores_scalar(q16, g, k, k_stride, rows, t0, t1, n_kv, head_dim, scale, s);
}

void ember_attn_probs(int isa, float *s, int64_t n_kv) {
	if (n_kv <= 0) return;
#if defined(__x86_64__)
	if (AG_X512(isa)) {
		attn_probs_avx512(s, n_kv);
		return;
	}
	if (AG_X86(isa)) {
		attn_probs_avx2(s, n_kv);
		return;
	}
#endif
#if defined(__aarch64__)
	if (isa == EMBER_ISA_NEON) {
		attn_probs_neon(s, n_kv);
		return;
	}
#endif
	attn_probs_scalar(s, n_kv);
}

void ember_attn_values(int isa, const float *s, int64_t g, int64_t n_kv, const uint16_t *v, int64_t v_stride,
                       const int32_t *rows, int64_t v_head_dim, int64_t c0, int64_t c1, float *out, int64_t ostride) {
	if (g < 1 || g > EMBER_ATTN_SPLIT_MAX || n_kv <= 0 || c0 < 0 || c0 % 8 || c1 > v_head_dim || c0 >= c1 ||
	    (c1 % 8 && c1 != v_head_dim))
		return;
#if defined(__x86_64__)
	if (AG_X512(isa)) {
		attn_values_avx512(s, g, n_kv, v, v_stride, rows, v_head_dim, c0, c1, out, ostride);
		return;
	}
	if (AG_X86(isa)) {
		attn_values_avx2(s, g, n_kv, v, v_stride, rows, v_head_dim, c0, c1, out, ostride);
		return;
	}
#endif
#if defined(__aarch64__)
	if (isa == EMBER_ISA_NEON) {
		attn_values_neon(s, g, n_kv, v, v_stride, rows, v_head_dim, c0, c1, out, ostride);
		return;
	}
#endif
	attn_values_scalar(s, g, n_kv, v, v_stride, rows, c0, c1, out, ostride);
}
