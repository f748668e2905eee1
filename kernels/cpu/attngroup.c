// attngroup.c: attention of the g query heads of one KV head over an f16 cache
// (ember_attention_group, see kernels.h): dispatch and the scalar C reference. The SIMD
// paths live in attngroup_avx2.c and attngroup_neon.c.
//
// scratch layout (floats): s[g*n_kv] the scores of head i at s + i*n_kv (then its p),
// then q16[g*head_dim] the heads of q rounded to f16; g*(n_kv + head_dim) floats in all.
#include "elem.h"

void attn_group_scalar(const float *q, int64_t g, const uint16_t *k, int64_t k_stride, const uint16_t *v,
                       int64_t v_stride, const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim,
                       float scale, float *out, float *scratch) {
	float *s = scratch, *q16 = scratch + g * n_kv;
	for (int64_t d = 0; d < g * head_dim; d++) q16[d] = lg_h2f(lg_f2h(q[d]));
	for (int64_t t = 0; t < n_kv; t++) {
		const uint16_t *kt = k + EROW(rows, t) * k_stride;
		for (int64_t i = 0; i < g; i++) {
			const float *qi = q16 + i * head_dim;
			float dot = 0;
			for (int64_t d = 0; d < head_dim; d++) dot += qi[d] * lg_h2f(kt[d]);
			s[i * n_kv + t] = scale * dot;
		}
	}
	for (int64_t i = 0; i < g; i++) {
		float *si = s + i * n_kv;
		const float inv = elem_softmax_exp_scalar(si, n_kv);
		for (int64_t t = 0; t < n_kv; t++) si[t] = lg_h2f(lg_f2h(si[t] * inv));
	}
	for (int64_t d = 0; d < g * v_head_dim; d++) out[d] = 0;
	for (int64_t t = 0; t < n_kv; t++) {
		const uint16_t *vt = v + EROW(rows, t) * v_stride;
		for (int64_t i = 0; i < g; i++) {
			const float p = s[i * n_kv + t];
			float *o = out + i * v_head_dim;
			for (int64_t d = 0; d < v_head_dim; d++) o[d] += p * lg_h2f(vt[d]);
		}
	}
}

#if defined(__x86_64__)
#define AG_X86(isa) ((isa) >= EMBER_ISA_AVX2 && (isa) <= EMBER_ISA_AVX512VNNI)
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
