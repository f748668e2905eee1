// elem_avx2.c: AVX2 + FMA + F16C row ops (see elem.c for the scalar reference).
#include "elem.h"

#if defined(__x86_64__)
#include <immintrin.h> // before the target pragma: its functions carry their own targets
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC target("avx2,fma,f16c")
#endif
#include "lg_x86.h"
#include "elem_x86.h"

void elem_rmsnorm_avx2(const float *x, const float *w, float *y, int64_t n, float eps) {
	// float squares summed in double, as ggml's rms_norm; four double accumulators
	__m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd(), s2 = _mm256_setzero_pd(), s3 = _mm256_setzero_pd();
	int64_t i = 0;
	for (; i + 16 <= n; i += 16) {
		const __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
		const __m256 a2 = _mm256_mul_ps(a, a), b2 = _mm256_mul_ps(b, b);
		s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(a2)));
		s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps(a2, 1)));
		s2 = _mm256_add_pd(s2, _mm256_cvtps_pd(_mm256_castps256_ps128(b2)));
		s3 = _mm256_add_pd(s3, _mm256_cvtps_pd(_mm256_extractf128_ps(b2, 1)));
	}
	__m256d s = _mm256_add_pd(_mm256_add_pd(s0, s1), _mm256_add_pd(s2, s3));
	__m128d h = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
	double sum = _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
	for (; i < n; i++) sum += (double)(x[i] * x[i]);
	const float scale = 1.0f / sqrtf((float)(sum / (double)n) + eps);
	const __m256 vs = _mm256_set1_ps(scale);
	i = 0;
	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), vs), _mm256_loadu_ps(w + i)));
	for (; i < n; i++) y[i] = x[i] * scale * w[i];
}

void elem_binary_avx2(int op, const float *a, const float *b, float *y, int64_t n) {
	int64_t i = 0;
	if (op == 0) {
		for (; i + 16 <= n; i += 16) {
			_mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
			_mm256_storeu_ps(y + i + 8, _mm256_add_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8)));
		}
		for (; i < n; i++) y[i] = a[i] + b[i];
	} else {
		for (; i + 16 <= n; i += 16) {
			_mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
			_mm256_storeu_ps(y + i + 8, _mm256_mul_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8)));
		}
		for (; i < n; i++) y[i] = a[i] * b[i];
	}
}

// silu(g) * u on 8 lanes: g / (1 + exp(-g)) * u.
LGA __m256 ea_swiglu8(__m256 g, __m256 u) {
	const __m256 e = ea_exp(_mm256_xor_ps(g, _mm256_set1_ps(-0.0f)));
	return _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e)), u);
}

void elem_swiglu_avx2(const float *g, const float *u, float *y, int64_t n) {
	int64_t i = 0;
	for (; i + 16 <= n; i += 16) {
		const __m256 a = ea_swiglu8(_mm256_loadu_ps(g + i), _mm256_loadu_ps(u + i));
		const __m256 b = ea_swiglu8(_mm256_loadu_ps(g + i + 8), _mm256_loadu_ps(u + i + 8));
		_mm256_storeu_ps(y + i, a);
		_mm256_storeu_ps(y + i + 8, b);
	}
	if (i < n) {
		// the tail through a padded vector, so every element gets the same exp
		float gb[16] = {0}, ub[16] = {0}, yb[16];
		const int64_t r = n - i;
		memcpy(gb, g + i, (size_t)r * 4);
		memcpy(ub, u + i, (size_t)r * 4);
		_mm256_storeu_ps(yb, ea_swiglu8(_mm256_loadu_ps(gb), _mm256_loadu_ps(ub)));
		_mm256_storeu_ps(yb + 8, ea_swiglu8(_mm256_loadu_ps(gb + 8), _mm256_loadu_ps(ub + 8)));
		memcpy(y + i, yb, (size_t)r * 4);
	}
}

void elem_f32_to_f16_avx2(const float *x, uint16_t *y, int64_t n) {
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) _mm_storeu_si128((__m128i *)(y + i), lga_f2h8(_mm256_loadu_ps(x + i)));
	for (; i < n; i++) y[i] = lg_f2h(x[i]);
}

void elem_f16_to_f32_avx2(const uint16_t *x, float *y, int64_t n) {
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i))));
	for (; i < n; i++) y[i] = lg_h2f(x[i]);
}

void elem_rope_avx2(float *x, int64_t nheads, int64_t head_dim, int64_t dims, int neox, const float *cs) {
	const int64_t half = dims / 2;
	for (int64_t h = 0; h < nheads; h++) {
		float *xh = x + h * head_dim;
		int64_t i = 0;
		if (neox) {
			for (; i + 8 <= half; i += 8) {
				const __m256 a = _mm256_loadu_ps(cs + 2 * i), b = _mm256_loadu_ps(cs + 2 * i + 8);
				// deinterleave (c, s) pairs: even lanes are cosines, odd lanes sines
				const __m256 c = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xd8));
				const __m256 s = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xdd)), 0xd8));
				const __m256 x0 = _mm256_loadu_ps(xh + i), x1 = _mm256_loadu_ps(xh + i + half);
				_mm256_storeu_ps(xh + i, _mm256_fmsub_ps(x0, c, _mm256_mul_ps(x1, s)));
				_mm256_storeu_ps(xh + i + half, _mm256_fmadd_ps(x0, s, _mm256_mul_ps(x1, c)));
			}
			for (; i < half; i++) {
				const float c = cs[2 * i], s = cs[2 * i + 1], x0 = xh[i], x1 = xh[i + half];
				xh[i] = x0 * c - x1 * s;
				xh[i + half] = x0 * s + x1 * c;
			}
		} else {
			for (; i + 4 <= half; i += 4) {
				const __m256 v = _mm256_loadu_ps(xh + 2 * i), t = _mm256_loadu_ps(cs + 2 * i);
				const __m256 c = _mm256_moveldup_ps(t), s = _mm256_movehdup_ps(t);
				const __m256 sw = _mm256_permute_ps(v, 0xb1); // (x1, x0) pairs
				_mm256_storeu_ps(xh + 2 * i, _mm256_fmaddsub_ps(v, c, _mm256_mul_ps(sw, s)));
			}
			for (; i < half; i++) {
				const float c = cs[2 * i], s = cs[2 * i + 1], x0 = xh[2 * i], x1 = xh[2 * i + 1];
				xh[2 * i] = x0 * c - x1 * s;
				xh[2 * i + 1] = x0 * s + x1 * c;
			}
		}
	}
}

// The first steps of a softmax over s[0..n) (n > 0), shared by the attention kernels over
// f16 and Q8_0 caches: m = max s, s[t] = exp(s[t] - m) (the tail through a padded
// vector, so every element gets the same exp), and the returned (float)(1/sum) with the
// sum in double. The caller scales s by it.
float elem_softmax_exp_avx2(float *s, int64_t n) {
	__m256 mv = _mm256_set1_ps(-INFINITY);
	int64_t t = 0;
	for (; t + 8 <= n; t += 8) mv = _mm256_max_ps(mv, _mm256_loadu_ps(s + t));
	__m128 m4 = _mm_max_ps(_mm256_castps256_ps128(mv), _mm256_extractf128_ps(mv, 1));
	m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
	float m = _mm_cvtss_f32(_mm_max_ss(m4, _mm_movehdup_ps(m4)));
	for (; t < n; t++)
		if (s[t] > m) m = s[t];
	const __m256 vm = _mm256_set1_ps(m);
	__m256d sd0 = _mm256_setzero_pd(), sd1 = _mm256_setzero_pd();
	t = 0;
	for (; t + 8 <= n; t += 8) {
		const __m256 e = ea_exp(_mm256_sub_ps(_mm256_loadu_ps(s + t), vm));
		_mm256_storeu_ps(s + t, e);
		sd0 = _mm256_add_pd(sd0, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
		sd1 = _mm256_add_pd(sd1, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
	}
	if (t < n) {
		float b[8];
		const int64_t r = n - t;
		for (int j = 0; j < 8; j++) b[j] = j < r ? s[t + j] - m : -INFINITY;
		const __m256 e = ea_exp(_mm256_loadu_ps(b)); // exp(-inf) = 0 in the padding
		_mm256_storeu_ps(b, e);
		memcpy(s + t, b, (size_t)r * 4);
		sd0 = _mm256_add_pd(sd0, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
		sd1 = _mm256_add_pd(sd1, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
	}
	const __m256d sd = _mm256_add_pd(sd0, sd1);
	const __m128d h2 = _mm_add_pd(_mm256_castpd256_pd128(sd), _mm256_extractf128_pd(sd, 1));
	const double sum = _mm_cvtsd_f64(_mm_add_sd(h2, _mm_unpackhi_pd(h2, h2)));
	return (float)(1.0 / sum);
}

void elem_attention_avx2(const float *q, const uint16_t *k, int64_t k_stride, const uint16_t *v, int64_t v_stride, const int32_t *rows,
                         int64_t n_kv, int64_t head_dim, int64_t v_head_dim, float scale, float *out,
                         float *scratch) {
	float *s = scratch, *q16 = scratch + n_kv;
	const int64_t hd8 = head_dim & ~(int64_t)7, hrem = head_dim - hd8;
	int64_t d = 0;
	for (; d < hd8; d += 8) _mm256_storeu_ps(q16 + d, ea_round16(_mm256_loadu_ps(q + d)));
	for (; d < head_dim; d++) q16[d] = lg_h2f(lg_f2h(q[d]));
	__m256 qt = _mm256_setzero_ps(); // the last head_dim % 8 elements of q, zero-padded
	if (hrem) {
		float b[8] = {0};
		memcpy(b, q16 + hd8, (size_t)hrem * 4);
		qt = _mm256_loadu_ps(b);
	}

	// scores, four positions at a time
	int64_t t = 0;
	for (; t + 4 <= n_kv; t += 4) {
		const uint16_t *k0 = k + EROW(rows, t) * k_stride, *k1 = k + EROW(rows, t + 1) * k_stride,
		               *k2 = k + EROW(rows, t + 2) * k_stride, *k3 = k + EROW(rows, t + 3) * k_stride;
		elem_prefetch_k(t, n_kv, rows, k, k_stride, 2 * head_dim); // a decode row's cache is cold
		__m256 a[8];
		for (int j = 0; j < 8; j++) a[j] = _mm256_setzero_ps();
		for (d = 0; d + 16 <= hd8; d += 16) {
			const __m256 qa = _mm256_loadu_ps(q16 + d), qb = _mm256_loadu_ps(q16 + d + 8);
			a[0] = _mm256_fmadd_ps(qa, ea_load16(k0 + d), a[0]);
			a[1] = _mm256_fmadd_ps(qa, ea_load16(k1 + d), a[1]);
			a[2] = _mm256_fmadd_ps(qa, ea_load16(k2 + d), a[2]);
			a[3] = _mm256_fmadd_ps(qa, ea_load16(k3 + d), a[3]);
			a[4] = _mm256_fmadd_ps(qb, ea_load16(k0 + d + 8), a[4]);
			a[5] = _mm256_fmadd_ps(qb, ea_load16(k1 + d + 8), a[5]);
			a[6] = _mm256_fmadd_ps(qb, ea_load16(k2 + d + 8), a[6]);
			a[7] = _mm256_fmadd_ps(qb, ea_load16(k3 + d + 8), a[7]);
		}
		for (; d < hd8; d += 8) {
			const __m256 qa = _mm256_loadu_ps(q16 + d);
			a[0] = _mm256_fmadd_ps(qa, ea_load16(k0 + d), a[0]);
			a[1] = _mm256_fmadd_ps(qa, ea_load16(k1 + d), a[1]);
			a[2] = _mm256_fmadd_ps(qa, ea_load16(k2 + d), a[2]);
			a[3] = _mm256_fmadd_ps(qa, ea_load16(k3 + d), a[3]);
		}
		if (hrem) {
			a[4] = _mm256_fmadd_ps(qt, ea_load16_part(k0 + hd8, hrem), a[4]);
			a[5] = _mm256_fmadd_ps(qt, ea_load16_part(k1 + hd8, hrem), a[5]);
			a[6] = _mm256_fmadd_ps(qt, ea_load16_part(k2 + hd8, hrem), a[6]);
			a[7] = _mm256_fmadd_ps(qt, ea_load16_part(k3 + hd8, hrem), a[7]);
		}
		__m256 h[8];
		for (int j = 0; j < 4; j++) h[j] = _mm256_add_ps(a[j], a[j + 4]);
		for (int j = 4; j < 8; j++) h[j] = _mm256_setzero_ps();
		const __m256 r = lga_hsum8(h);
		_mm_storeu_ps(s + t, _mm_mul_ps(_mm256_castps256_ps128(r), _mm_set1_ps(scale)));
	}
	for (; t < n_kv; t++) s[t] = ea_score1(q16, qt, k + EROW(rows, t) * k_stride, hd8, hrem, scale);

	// softmax: max, exp, sum in double, p rounded to f16
	ea_probs_f16(s, 0, n_kv, elem_softmax_exp_avx2(s, n_kv));

	// out = sum_t p_t v_t, 64 columns at a time in registers
	const int64_t vd8 = v_head_dim & ~(int64_t)7;
	for (int64_t d0 = 0; d0 < vd8; d0 += 64) {
		const int nv = (int)((vd8 - d0) / 8 < 8 ? (vd8 - d0) / 8 : 8);
		__m256 acc[8];
		for (int j = 0; j < 8; j++) acc[j] = _mm256_setzero_ps();
		if (nv == 8) {
			for (t = 0; t < n_kv; t++) {
				const __m256 p = _mm256_broadcast_ss(s + t);
				const uint16_t *vt = v + EROW(rows, t) * v_stride + d0;
				for (int j = 0; j < 8; j++) acc[j] = _mm256_fmadd_ps(p, ea_load16(vt + 8 * j), acc[j]);
			}
		} else {
			for (t = 0; t < n_kv; t++) {
				const __m256 p = _mm256_broadcast_ss(s + t);
				const uint16_t *vt = v + EROW(rows, t) * v_stride + d0;
				for (int j = 0; j < nv; j++) acc[j] = _mm256_fmadd_ps(p, ea_load16(vt + 8 * j), acc[j]);
			}
		}
		for (int j = 0; j < nv; j++) _mm256_storeu_ps(out + d0 + 8 * j, acc[j]);
	}
	if (vd8 < v_head_dim) {
		const int64_t r = v_head_dim - vd8;
		__m256 acc = _mm256_setzero_ps();
		for (t = 0; t < n_kv; t++) acc = _mm256_fmadd_ps(_mm256_broadcast_ss(s + t), ea_load16_part(v + EROW(rows, t) * v_stride + vd8, r), acc);
		float b[8];
		_mm256_storeu_ps(b, acc);
		memcpy(out + vd8, b, (size_t)r * 4);
	}
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
