// attnq8_neon.c: aarch64 Advanced SIMD attention over a Q8_0 KV cache (see attnq8.c for
// the scalar reference and the scratch layout). Block dots use sdot (vdotq_s32) where the
// compiler targets the dotprod extension and vmull/vpaddl otherwise (as lg_neon.c), then
// an FMA with dK*dQ into 4 float lanes per position, 4 positions at a time. V: 64
// columns (two blocks) in 16 registers over all positions, FMAed with p*dV.
#include "elem.h"
#include "attnq8.h"

#if defined(__aarch64__)
#include <arm_neon.h>

#define AQN static inline __attribute__((always_inline))

// acc + per-lane sums of the 4 byte products of a and b.
AQN int32x4_t aqn_dot(int32x4_t acc, int8x16_t a, int8x16_t b) {
#if defined(__ARM_FEATURE_DOTPROD)
	return vdotq_s32(acc, a, b);
#else
	const int32x4_t lo = vpaddlq_s16(vmull_s8(vget_low_s8(a), vget_low_s8(b)));
	const int32x4_t hi = vpaddlq_s16(vmull_high_s8(a, b));
	return vaddq_s32(acc, vpaddq_s32(lo, hi));
#endif
}

// The integer dot of the 32 quants of a K block (at kb) and of q (at y), in 4 lanes.
AQN float32x4_t aqn_block(const uint8_t *kb, const int8_t *y) {
	int32x4_t i = aqn_dot(vdupq_n_s32(0), vld1q_s8((const int8_t *)(kb + 2)), vld1q_s8(y));
	i = aqn_dot(i, vld1q_s8((const int8_t *)(kb + 18)), vld1q_s8(y + 16));
	return vcvtq_f32_s32(i);
}

// 16 int8 widened to 4 vectors of floats, FMAed with p into acc[0..4).
AQN void aqn_mad16(float32x4_t *acc, const uint8_t *p8, float p) {
	const int8x16_t x = vld1q_s8((const int8_t *)p8);
	const int16x8_t lo = vmovl_s8(vget_low_s8(x)), hi = vmovl_high_s8(x);
	acc[0] = vfmaq_n_f32(acc[0], vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo))), p);
	acc[1] = vfmaq_n_f32(acc[1], vcvtq_f32_s32(vmovl_high_s16(lo)), p);
	acc[2] = vfmaq_n_f32(acc[2], vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi))), p);
	acc[3] = vfmaq_n_f32(acc[3], vcvtq_f32_s32(vmovl_high_s16(hi)), p);
}

void attnq8_neon(const float *q, const uint8_t *k, int64_t k_stride, const uint8_t *v, int64_t v_stride,
                 const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim, float scale,
                 float *out, float *scratch) {
	const int64_t nb = head_dim / LG_QK, nbv = v_head_dim / LG_QK;
	float *s = scratch, *dq = scratch + n_kv;
	int8_t *qq = (int8_t *)(dq + nb);
	attnq8_quantize_q(q, head_dim, dq, qq);

	int64_t t = 0;
	for (; t + 4 <= n_kv; t += 4) {
		const uint8_t *kr[4] = {k + EROW(rows, t) * k_stride, k + EROW(rows, t + 1) * k_stride,
		                        k + EROW(rows, t + 2) * k_stride, k + EROW(rows, t + 3) * k_stride};
		float32x4_t a[4] = {vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0)};
		for (int64_t b = 0; b < nb; b++) {
			const int64_t o = b * AQ8_BLOCK;
			for (int j = 0; j < 4; j++)
				a[j] = vfmaq_n_f32(a[j], aqn_block(kr[j] + o, qq + b * LG_QK), lg_h2f(lg_rd16(kr[j] + o)) * dq[b]);
		}
		for (int j = 0; j < 4; j++) s[t + j] = scale * vaddvq_f32(a[j]);
	}
	for (; t < n_kv; t++) {
		const uint8_t *kt = k + EROW(rows, t) * k_stride;
		float32x4_t a = vdupq_n_f32(0);
		for (int64_t b = 0; b < nb; b++) {
			const uint8_t *kb = kt + b * AQ8_BLOCK;
			a = vfmaq_n_f32(a, aqn_block(kb, qq + b * LG_QK), lg_h2f(lg_rd16(kb)) * dq[b]);
		}
		s[t] = scale * vaddvq_f32(a);
	}

	// softmax: max, exp, sum in double (elem_neon.c), then p = e * (float)(1/sum)
	const float inv = elem_softmax_exp_neon(s, n_kv);
	t = 0;
	for (; t + 4 <= n_kv; t += 4) vst1q_f32(s + t, vmulq_n_f32(vld1q_f32(s + t), inv));
	for (; t < n_kv; t++) s[t] = s[t] * inv;

	// out = sum_t p_t v_t, two blocks (64 columns) at a time, then a last single block
	int64_t b0 = 0;
	for (; b0 < nbv; b0 += 2) {
		const int two = b0 + 2 <= nbv;
		float32x4_t acc[16];
		for (int j = 0; j < 16; j++) acc[j] = vdupq_n_f32(0);
		for (t = 0; t < n_kv; t++) {
			const uint8_t *vb = v + EROW(rows, t) * v_stride + b0 * AQ8_BLOCK;
			const float p0 = s[t] * lg_h2f(lg_rd16(vb));
			aqn_mad16(acc, vb + 2, p0);
			aqn_mad16(acc + 4, vb + 18, p0);
			if (two) {
				const float p1 = s[t] * lg_h2f(lg_rd16(vb + AQ8_BLOCK));
				aqn_mad16(acc + 8, vb + AQ8_BLOCK + 2, p1);
				aqn_mad16(acc + 12, vb + AQ8_BLOCK + 18, p1);
			}
		}
		for (int j = 0; j < (two ? 16 : 8); j++) vst1q_f32(out + b0 * LG_QK + 4 * j, acc[j]);
	}
}

#endif
