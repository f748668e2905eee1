// attnq8.c: attention of one query head over a Q8_0 KV cache (ember_attention_q8, see
// attnq8.h): dispatch, the rounding of q to Q8_0 shared by every path, and the scalar C
// reference. The SIMD paths live in attnq8_avx2.c, attnq8_avx512.c and attnq8_neon.c
// and are tested against this code, which package cpu's tests check against a plain Go
// reference.
//
// scratch layout (floats): s[n_kv] the scores, then dq[head_dim/32] the scales of q,
// then the head_dim int8 quants of q (head_dim/4 floats); n_kv + head_dim floats in all.
#include <math.h>
#include "elem.h"
#include "attnq8.h"

static void attnq8_quantize_q(const float *q, int64_t head_dim, float *dq, int8_t *qq) {
	// quantize_row_q8_0_ref: amax over the block, d = amax/127, quants roundf(x * 1/d)
	for (int64_t b = 0; b < head_dim / LG_QK; b++) {
		const float *x = q + b * LG_QK;
		float amax = 0;
		for (int j = 0; j < LG_QK; j++) {
			const float a = fabsf(x[j]);
			amax = amax > a ? amax : a;
		}
		const float d = amax / 127.0f, id = d != 0 ? 1.0f / d : 0.0f;
		for (int j = 0; j < LG_QK; j++) qq[b * LG_QK + j] = (int8_t)roundf(x[j] * id);
		dq[b] = lg_h2f(lg_f2h(d));
	}
}

void attnq8_scalar(const float *q, const uint8_t *k, int64_t k_stride, const uint8_t *v, int64_t v_stride,
                   const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim, float scale,
                   float *out, float *scratch) {
	const int64_t nb = head_dim / LG_QK, nbv = v_head_dim / LG_QK;
	const aq8_scratch sc = attnq8_prepare(q, 1, n_kv, head_dim, scratch);
	float *s = sc.s;
	const float *dq = sc.dq;
	const int8_t *qq = sc.qq;

	// scores: ggml_vec_dot_q8_0_q8_0's scalar path, blocks summed in order in float
	for (int64_t t = 0; t < n_kv; t++) {
		const uint8_t *kt = k + EROW(rows, t) * k_stride;
		float dot = 0;
		for (int64_t b = 0; b < nb; b++) {
			const uint8_t *kb = kt + b * AQ8_BLOCK;
			const int8_t *kq = (const int8_t *)(kb + 2), *xq = qq + b * LG_QK;
			int32_t isum = 0;
			for (int j = 0; j < LG_QK; j++) isum += (int32_t)kq[j] * (int32_t)xq[j];
			dot += (float)isum * (lg_h2f(lg_rd16(kb)) * dq[b]);
		}
		s[t] = scale * dot;
	}

	// softmax as elem_attention_scalar, but p is not rounded to f16
	const float inv = elem_softmax_exp_scalar(s, n_kv);
	for (int64_t d = 0; d < v_head_dim; d++) out[d] = 0;
	for (int64_t t = 0; t < n_kv; t++) {
		const float p = s[t] * inv;
		const uint8_t *vt = v + EROW(rows, t) * v_stride;
		for (int64_t b = 0; b < nbv; b++) {
			const uint8_t *vb = vt + b * AQ8_BLOCK;
			const int8_t *vq = (const int8_t *)(vb + 2);
			const float dv = lg_h2f(lg_rd16(vb));
			float *o = out + b * LG_QK;
			for (int j = 0; j < LG_QK; j++) o[j] += p * (dv * (float)vq[j]);
		}
	}
}

// scratch layout of the grouped paths (floats): s[g*n_kv] the scores of head i at
// s + i*n_kv (then its p), dq[g*(head_dim/32)] the scales of q (head i's at
// dq + i*head_dim/32), then the g*head_dim int8 quants of q (head i's at qq + i*head_dim);
// at most g*(n_kv + head_dim) floats in all, for g = 1 the layout above.
aq8_scratch attnq8_prepare(const float *q, int64_t g, int64_t n_kv, int64_t head_dim, float *scratch) {
	const int64_t nb = head_dim / LG_QK;
	aq8_scratch r = {scratch, scratch + g * n_kv, (int8_t *)(scratch + g * n_kv + g * nb)};
	for (int64_t i = 0; i < g; i++) attnq8_quantize_q(q + i * head_dim, head_dim, r.dq + i * nb, r.qq + i * head_dim);
	return r;
}

void attnq8_group_scalar(const float *q, int64_t g, const uint8_t *k, int64_t k_stride, const uint8_t *v,
                         int64_t v_stride, const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim,
                         float scale, float *out, float *scratch) {
	const int64_t nb = head_dim / LG_QK, nbv = v_head_dim / LG_QK;
	const aq8_scratch sc = attnq8_prepare(q, g, n_kv, head_dim, scratch);
	float *s = sc.s, *dq = sc.dq;
	const int8_t *qq = sc.qq;

	// scores: ggml_vec_dot_q8_0_q8_0's scalar path, blocks summed in order in float
	for (int64_t t = 0; t < n_kv; t++) {
		const uint8_t *kt = k + EROW(rows, t) * k_stride;
		for (int64_t i = 0; i < g; i++) {
			const float *dqi = dq + i * nb;
			float dot = 0;
			for (int64_t b = 0; b < nb; b++) {
				const uint8_t *kb = kt + b * AQ8_BLOCK;
				const int8_t *kq = (const int8_t *)(kb + 2), *xq = qq + i * head_dim + b * LG_QK;
				int32_t isum = 0;
				for (int j = 0; j < LG_QK; j++) isum += (int32_t)kq[j] * (int32_t)xq[j];
				dot += (float)isum * (lg_h2f(lg_rd16(kb)) * dqi[b]);
			}
			s[i * n_kv + t] = scale * dot;
		}
	}

	// softmax as elem_attention_scalar, but p is not rounded to f16
	for (int64_t i = 0; i < g; i++) {
		float *si = s + i * n_kv;
		const float inv = elem_softmax_exp_scalar(si, n_kv);
		for (int64_t t = 0; t < n_kv; t++) si[t] = si[t] * inv;
	}
	for (int64_t d = 0; d < g * v_head_dim; d++) out[d] = 0;
	for (int64_t t = 0; t < n_kv; t++) {
		const uint8_t *vt = v + EROW(rows, t) * v_stride;
		for (int64_t i = 0; i < g; i++) {
			const float p = s[i * n_kv + t];
			for (int64_t b = 0; b < nbv; b++) {
				const uint8_t *vb = vt + b * AQ8_BLOCK;
				const int8_t *vq = (const int8_t *)(vb + 2);
				const float dv = lg_h2f(lg_rd16(vb));
				float *o = out + i * v_head_dim + b * LG_QK;
				for (int j = 0; j < LG_QK; j++) o[j] += p * (dv * (float)vq[j]);
			}
		}
	}
}

// ---- dispatch (the AVX-512 paths have the AVX2 paths' bits; AVX2VNNI machines take AVX2)

#if defined(__x86_64__)
#define AQ8_X86(isa) ((isa) >= EMBER_ISA_AVX2 && (isa) <= EMBER_ISA_AVX512VNNI)
#define AQ8_X512(isa) ((isa) == EMBER_ISA_AVX512 || (isa) == EMBER_ISA_AVX512VNNI)
#endif

void ember_attention_q8(int isa, const float *q, const void *k, int64_t k_stride, const void *v,
                        int64_t v_stride, const int32_t *rows, int64_t n_kv, int64_t head_dim,
                        int64_t v_head_dim, float scale, float *out, float *scratch) {
	if (n_kv <= 0 || head_dim <= 0 || v_head_dim <= 0 || head_dim % LG_QK != 0 || v_head_dim % LG_QK != 0) return;
	const uint8_t *kb = (const uint8_t *)k, *vb = (const uint8_t *)v;
#if defined(__x86_64__)
	if (AQ8_X512(isa)) {
		attnq8_avx512(isa == EMBER_ISA_AVX512VNNI, q, kb, k_stride, vb, v_stride, rows, n_kv, head_dim, v_head_dim, scale,
		              out, scratch);
		return;
	}
	if (AQ8_X86(isa)) {
		attnq8_avx2(q, kb, k_stride, vb, v_stride, rows, n_kv, head_dim, v_head_dim, scale, out, scratch);
		return;
	}
#endif
#if defined(__aarch64__)
	if (isa == EMBER_ISA_NEON) {
		attnq8_neon(q, kb, k_stride, vb, v_stride, rows, n_kv, head_dim, v_head_dim, scale, out, scratch);
		return;
	}
#endif
	attnq8_scalar(q, kb, k_stride, vb, v_stride, rows, n_kv, head_dim, v_head_dim, scale, out, scratch);
}

void ember_attention_q8_group(int isa, const float *q, int64_t g, const void *k, int64_t k_stride,
                              const void *v, int64_t v_stride, const int32_t *rows, int64_t n_kv,
                              int64_t head_dim, int64_t v_head_dim, float scale, float *out, float *scratch) {
	if (n_kv <= 0 || g < 1 || g > EMBER_GQA_MAX || head_dim <= 0 || v_head_dim <= 0 || head_dim % LG_QK != 0 ||
	    v_head_dim % LG_QK != 0)
		return;
	if (g == 1) { // the single-head kernel is a little faster alone (no runs, no tiles)
		ember_attention_q8(isa, q, k, k_stride, v, v_stride, rows, n_kv, head_dim, v_head_dim, scale, out, scratch);
		return;
	}
	const uint8_t *kb = (const uint8_t *)k, *vb = (const uint8_t *)v;
#if defined(__x86_64__)
	if (AQ8_X512(isa)) {
		attnq8_group_avx512(isa == EMBER_ISA_AVX512VNNI, q, g, kb, k_stride, vb, v_stride, rows, n_kv, head_dim,
		                    v_head_dim, scale, out, scratch);
		return;
	}
	if (AQ8_X86(isa)) {
		attnq8_group_avx2(q, g, kb, k_stride, vb, v_stride, rows, n_kv, head_dim, v_head_dim, scale, out, scratch);
		return;
	}
#endif
#if defined(__aarch64__)
	if (isa == EMBER_ISA_NEON) {
		attnq8_group_neon(q, g, kb, k_stride, vb, v_stride, rows, n_kv, head_dim, v_head_dim, scale, out, scratch);
		return;
	}
#endif
	attnq8_group_scalar(q, g, kb, k_stride, vb, v_stride, rows, n_kv, head_dim, v_head_dim, scale, out, scratch);
}
