// elem_neon.c: aarch64 Advanced SIMD row ops (see elem.c for the scalar reference).
#include "elem.h"

#if defined(__aarch64__)
#include <arm_neon.h>

#define ELN static inline __attribute__((always_inline))

void elem_rmsnorm_neon(const float *x, const float *w, float *y, int64_t n, float eps) {
	float64x2_t s0 = vdupq_n_f64(0), s1 = vdupq_n_f64(0);
	int64_t i = 0;
	for (; i + 4 <= n; i += 4) {
		const float32x4_t a = vld1q_f32(x + i), a2 = vmulq_f32(a, a);
		s0 = vaddq_f64(s0, vcvt_f64_f32(vget_low_f32(a2)));
		s1 = vaddq_f64(s1, vcvt_high_f64_f32(a2));
	}
	double sum = vaddvq_f64(vaddq_f64(s0, s1));
	for (; i < n; i++) sum += (double)(x[i] * x[i]);
	const float scale = 1.0f / sqrtf((float)(sum / (double)n) + eps);
	i = 0;
	for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vmulq_f32(vmulq_n_f32(vld1q_f32(x + i), scale), vld1q_f32(w + i)));
	for (; i < n; i++) y[i] = x[i] * scale * w[i];
}

void elem_binary_neon(int op, const float *a, const float *b, float *y, int64_t n) {
	int64_t i = 0;
	if (op == 0) {
		for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vaddq_f32(vld1q_f32(a + i), vld1q_f32(b + i)));
		for (; i < n; i++) y[i] = a[i] + b[i];
	} else {
		for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vmulq_f32(vld1q_f32(a + i), vld1q_f32(b + i)));
		for (; i < n; i++) y[i] = a[i] * b[i];
	}
}

// The exp of elem_x86.h (Cephes scheme, 2^n applied in two halves) on 4 lanes.
ELN float32x4_t en_exp(float32x4_t x) {
	x = vmaxq_f32(vdupq_n_f32(-104.0f), vminq_f32(vdupq_n_f32(89.0f), x)); // NaN stays NaN
	const float32x4_t n = vrndnq_f32(vmulq_n_f32(x, 1.44269504088896341f));
	float32x4_t r = vfmsq_f32(x, n, vdupq_n_f32(0.693359375f));
	r = vfmsq_f32(r, n, vdupq_n_f32(-2.12194440e-4f));
	float32x4_t p = vdupq_n_f32(1.9875691500e-4f);
	p = vfmaq_f32(vdupq_n_f32(1.3981999507e-3f), p, r);
	p = vfmaq_f32(vdupq_n_f32(8.3334519073e-3f), p, r);
	p = vfmaq_f32(vdupq_n_f32(4.1665795894e-2f), p, r);
	p = vfmaq_f32(vdupq_n_f32(1.6666665459e-1f), p, r);
	p = vfmaq_f32(vdupq_n_f32(5.0000001201e-1f), p, r);
	p = vfmaq_f32(r, p, vmulq_f32(r, r));
	p = vaddq_f32(p, vdupq_n_f32(1.0f));
	const int32x4_t ni = vcvtq_s32_f32(n);
	const int32x4_t n1 = vshrq_n_s32(ni, 1), n2 = vsubq_s32(ni, n1);
	const float32x4_t s1 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n1, vdupq_n_s32(127)), 23));
	const float32x4_t s2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n2, vdupq_n_s32(127)), 23));
	return vmulq_f32(vmulq_f32(p, s1), s2);
}

ELN float32x4_t en_swiglu4(float32x4_t g, float32x4_t u) {
	const float32x4_t e = en_exp(vnegq_f32(g));
	return vmulq_f32(vdivq_f32(g, vaddq_f32(vdupq_n_f32(1.0f), e)), u);
}

void elem_swiglu_neon(const float *g, const float *u, float *y, int64_t n) {
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		const float32x4_t a = en_swiglu4(vld1q_f32(g + i), vld1q_f32(u + i));
		const float32x4_t b = en_swiglu4(vld1q_f32(g + i + 4), vld1q_f32(u + i + 4));
		vst1q_f32(y + i, a);
		vst1q_f32(y + i + 4, b);
	}
	for (; i < n; i += 4) {
		float gb[4] = {0}, ub[4] = {0}, yb[4];
		const int64_t r = n - i < 4 ? n - i : 4;
		memcpy(gb, g + i, (size_t)r * 4);
		memcpy(ub, u + i, (size_t)r * 4);
		vst1q_f32(yb, en_swiglu4(vld1q_f32(gb), vld1q_f32(ub)));
		memcpy(y + i, yb, (size_t)r * 4);
	}
}

// 4 floats to halves, ties to even; NaN becomes sign|0x7e00 as quant.FP32ToFP16.
ELN uint16x4_t en_f2h4(float32x4_t v) {
	const uint16x4_t h = vreinterpret_u16_f16(vcvt_f16_f32(v));
	const uint16x4_t nan = vmovn_u32(vmvnq_u32(vceqq_f32(v, v)));
	const uint16x4_t canon = vorr_u16(vand_u16(h, vdup_n_u16(0x8000)), vdup_n_u16(0x7e00));
	return vbsl_u16(nan, canon, h);
}

ELN float32x4_t en_h2f4(const uint16_t *p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }

void elem_f32_to_f16_neon(const float *x, uint16_t *y, int64_t n) {
	int64_t i = 0;
	for (; i + 4 <= n; i += 4) vst1_u16(y + i, en_f2h4(vld1q_f32(x + i)));
	for (; i < n; i++) y[i] = lg_f2h(x[i]);
}

void elem_f16_to_f32_neon(const uint16_t *x, float *y, int64_t n) {
	int64_t i = 0;
	for (; i + 4 <= n; i += 4) vst1q_f32(y + i, en_h2f4(x + i));
	for (; i < n; i++) y[i] = lg_h2f(x[i]);
}

void elem_rope_neon(float *x, int64_t nheads, int64_t head_dim, int64_t dims, int neox, const float *cs) {
	const int64_t half = dims / 2;
	for (int64_t h = 0; h < nheads; h++) {
		float *xh = x + h * head_dim;
		int64_t i = 0;
		for (; i + 4 <= half; i += 4) {
			const float32x4x2_t t = vld2q_f32(cs + 2 * i); // val[0] cosines, val[1] sines
			if (neox) {
				const float32x4_t x0 = vld1q_f32(xh + i), x1 = vld1q_f32(xh + i + half);
				vst1q_f32(xh + i, vfmsq_f32(vmulq_f32(x0, t.val[0]), x1, t.val[1]));
				vst1q_f32(xh + i + half, vfmaq_f32(vmulq_f32(x0, t.val[1]), x1, t.val[0]));
			} else {
				float32x4x2_t v = vld2q_f32(xh + 2 * i);
				const float32x4_t x0 = v.val[0], x1 = v.val[1];
				v.val[0] = vfmsq_f32(vmulq_f32(x0, t.val[0]), x1, t.val[1]);
				v.val[1] = vfmaq_f32(vmulq_f32(x0, t.val[1]), x1, t.val[0]);
				vst2q_f32(xh + 2 * i, v);
			}
		}
		for (; i < half; i++) {
			const int64_t i0 = neox ? i : 2 * i, i1 = neox ? i + half : 2 * i + 1;
			const float c = cs[2 * i], s = cs[2 * i + 1], x0 = xh[i0], x1 = xh[i1];
			xh[i0] = x0 * c - x1 * s;
			xh[i1] = x0 * s + x1 * c;
		}
	}
}

// elem.h's softmax steps; the tail through a padded vector, so every element gets the
// same exp.
float elem_softmax_exp_neon(float *s, int64_t n) {
	float m = -INFINITY;
	for (int64_t t = 0; t < n; t++)
		if (s[t] > m) m = s[t];
	float64x2_t sd = vdupq_n_f64(0);
	int64_t t = 0;
	for (; t + 4 <= n; t += 4) {
		const float32x4_t e = en_exp(vsubq_f32(vld1q_f32(s + t), vdupq_n_f32(m)));
		vst1q_f32(s + t, e);
		sd = vaddq_f64(sd, vaddq_f64(vcvt_f64_f32(vget_low_f32(e)), vcvt_high_f64_f32(e)));
	}
	double sum = vaddvq_f64(sd);
	if (t < n) {
		float b[4];
		const int64_t r = n - t;
		for (int j = 0; j < 4; j++) b[j] = j < r ? s[t + j] - m : -INFINITY;
		vst1q_f32(b, en_exp(vld1q_f32(b)));
		for (int j = 0; j < r; j++) {
			s[t + j] = b[j];
			sum += (double)b[j];
		}
	}
	return (float)(1.0 / sum);
}

void elem_attention_neon(const float *q, const uint16_t *k, int64_t k_stride, const uint16_t *v, int64_t v_stride, const int32_t *rows,
                         int64_t n_kv, int64_t head_dim, int64_t v_head_dim, float scale, float *out,
                         float *scratch) {
	float *s = scratch, *q16 = scratch + n_kv;
	const int64_t hd4 = head_dim & ~(int64_t)3;
	int64_t d = 0;
	for (; d < hd4; d += 4) vst1q_f32(q16 + d, vcvt_f32_f16(vcvt_f16_f32(vld1q_f32(q + d))));
	for (; d < head_dim; d++) q16[d] = lg_h2f(lg_f2h(q[d]));

	int64_t t = 0;
	for (; t + 4 <= n_kv; t += 4) {
		const uint16_t *kr[4] = {k + EROW(rows, t) * k_stride, k + EROW(rows, t + 1) * k_stride, k + EROW(rows, t + 2) * k_stride, k + EROW(rows, t + 3) * k_stride};
		float32x4_t a[4] = {vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0)};
		for (d = 0; d < hd4; d += 4) {
			const float32x4_t qv = vld1q_f32(q16 + d);
			for (int j = 0; j < 4; j++) a[j] = vfmaq_f32(a[j], qv, en_h2f4(kr[j] + d));
		}
		for (int j = 0; j < 4; j++) {
			float dot = vaddvq_f32(a[j]);
			for (int64_t dd = hd4; dd < head_dim; dd++) dot += q16[dd] * lg_h2f(kr[j][dd]);
			s[t + j] = scale * dot;
		}
	}
	for (; t < n_kv; t++) {
		const uint16_t *kt = k + EROW(rows, t) * k_stride;
		float32x4_t a = vdupq_n_f32(0);
		for (d = 0; d < hd4; d += 4) a = vfmaq_f32(a, vld1q_f32(q16 + d), en_h2f4(kt + d));
		float dot = vaddvq_f32(a);
		for (; d < head_dim; d++) dot += q16[d] * lg_h2f(kt[d]);
		s[t] = scale * dot;
	}
	const float inv = elem_softmax_exp_neon(s, n_kv);
	t = 0;
	for (; t + 4 <= n_kv; t += 4) vst1q_f32(s + t, vcvt_f32_f16(vcvt_f16_f32(vmulq_n_f32(vld1q_f32(s + t), inv))));
	for (; t < n_kv; t++) s[t] = lg_h2f(lg_f2h(s[t] * inv));

	const int64_t vd4 = v_head_dim & ~(int64_t)3;
	for (int64_t d0 = 0; d0 < vd4; d0 += 64) {
		const int nv = (int)((vd4 - d0) / 4 < 16 ? (vd4 - d0) / 4 : 16);
		float32x4_t acc[16];
		for (int j = 0; j < nv; j++) acc[j] = vdupq_n_f32(0);
		for (t = 0; t < n_kv; t++) {
			const float p = s[t];
			const uint16_t *vt = v + EROW(rows, t) * v_stride + d0;
			for (int j = 0; j < nv; j++) acc[j] = vfmaq_n_f32(acc[j], en_h2f4(vt + 4 * j), p);
		}
		for (int j = 0; j < nv; j++) vst1q_f32(out + d0 + 4 * j, acc[j]);
	}
	for (d = vd4; d < v_head_dim; d++) {
		float a = 0;
		for (t = 0; t < n_kv; t++) a += s[t] * lg_h2f(v[EROW(rows, t) * v_stride + d]);
		out[d] = a;
	}
}

#endif
