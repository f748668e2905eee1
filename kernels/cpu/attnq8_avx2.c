// attnq8_avx2.c: AVX2 + FMA + F16C attention over a Q8_0 KV cache (see attnq8.c for the
// scalar reference and the scratch layout).
//
// Scores: the int8 dot of a block as llama.cpp's AVX2 vec_dot_q8_0_q8_0 (sign trick: |k|
// times q with k's sign through maddubs, pairs summed by madd), converted to float and
// FMAed with dK*dQ into 8 lanes per position, 8 positions at a time. V: 64 columns (two
// blocks) in registers over all positions, 8 int8 widened to float at a time and FMAed
// with p*dV. Float sums run in a different order than the scalar path.
#include "elem.h"
#include "attnq8.h"

#if defined(__x86_64__)
#include <immintrin.h> // before the target pragma: its functions carry their own targets
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC target("avx2,fma,f16c")
#endif
#include "lg_x86.h"

// The f16 at p, widened, in all 8 lanes.
LGA __m256 aq8_scale8(const uint8_t *p) { return _mm256_cvtph_ps(_mm_set1_epi16((short)lg_rd16(p))); }

// The 8 int32 sums of 4 products of the signed bytes x and y, as floats (the sign trick:
// maddubs takes an unsigned first operand).
LGA __m256 aq8_dot(__m256i x, __m256i y) {
	const __m256i ax = _mm256_sign_epi8(x, x), sy = _mm256_sign_epi8(y, x);
	return _mm256_cvtepi32_ps(_mm256_madd_epi16(_mm256_maddubs_epi16(ax, sy), _mm256_set1_epi16(1)));
}

// 8 int8 at p widened to float.
LGA __m256 aq8_widen8(const uint8_t *p) { return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p))); }

void attnq8_avx2(const float *q, const uint8_t *k, int64_t k_stride, const uint8_t *v, int64_t v_stride,
                 const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim, float scale,
                 float *out, float *scratch) {
	const int64_t nb = head_dim / LG_QK, nbv = v_head_dim / LG_QK;
	float *s = scratch, *dq = scratch + n_kv;
	int8_t *qq = (int8_t *)(dq + nb);
	attnq8_quantize_q(q, head_dim, dq, qq);

	// scores, eight positions at a time
	const __m256 vscale = _mm256_set1_ps(scale);
	int64_t t = 0;
	for (; t + 8 <= n_kv; t += 8) {
		const uint8_t *kr[8];
		__m256 a[8];
		LG_UNROLL
		for (int j = 0; j < 8; j++) {
			kr[j] = k + EROW(rows, t + j) * k_stride;
			a[j] = _mm256_setzero_ps();
		}
		for (int64_t b = 0; b < nb; b++) {
			const __m256i y = _mm256_loadu_si256((const __m256i *)(qq + b * LG_QK));
			const __m256 d = _mm256_broadcast_ss(dq + b);
			const int64_t o = b * AQ8_BLOCK;
			LG_UNROLL
			for (int j = 0; j < 8; j++) {
				const __m256i x = _mm256_loadu_si256((const __m256i *)(kr[j] + o + 2));
				a[j] = _mm256_fmadd_ps(_mm256_mul_ps(aq8_scale8(kr[j] + o), d), aq8_dot(x, y), a[j]);
			}
		}
		_mm256_storeu_ps(s + t, _mm256_mul_ps(lga_hsum8(a), vscale));
	}
	for (; t < n_kv; t++) {
		const uint8_t *kt = k + EROW(rows, t) * k_stride;
		__m256 a = _mm256_setzero_ps();
		for (int64_t b = 0; b < nb; b++) {
			const uint8_t *kb = kt + b * AQ8_BLOCK;
			const __m256i x = _mm256_loadu_si256((const __m256i *)(kb + 2));
			const __m256i y = _mm256_loadu_si256((const __m256i *)(qq + b * LG_QK));
			a = _mm256_fmadd_ps(_mm256_mul_ps(aq8_scale8(kb), _mm256_broadcast_ss(dq + b)), aq8_dot(x, y), a);
		}
		s[t] = scale * lga_hsum(a);
	}

	// softmax: max, exp, sum in double (elem_avx2.c), then p = e * (float)(1/sum)
	const float inv = elem_softmax_exp_avx2(s, n_kv);
	const __m256 vinv = _mm256_set1_ps(inv);
	for (t = 0; t + 8 <= n_kv; t += 8) _mm256_storeu_ps(s + t, _mm256_mul_ps(_mm256_loadu_ps(s + t), vinv));
	for (; t < n_kv; t++) s[t] = s[t] * inv;

	// out = sum_t p_t v_t, two blocks (64 columns) at a time in registers, then a last
	// single block
	int64_t b0 = 0;
	for (; b0 + 2 <= nbv; b0 += 2) {
		__m256 acc[8];
		LG_UNROLL
		for (int j = 0; j < 8; j++) acc[j] = _mm256_setzero_ps();
		for (t = 0; t < n_kv; t++) {
			const uint8_t *vb = v + EROW(rows, t) * v_stride + b0 * AQ8_BLOCK;
			const __m256 p = _mm256_broadcast_ss(s + t);
			const __m256 p0 = _mm256_mul_ps(p, aq8_scale8(vb)), p1 = _mm256_mul_ps(p, aq8_scale8(vb + AQ8_BLOCK));
			LG_UNROLL
			for (int j = 0; j < 4; j++) {
				acc[j] = _mm256_fmadd_ps(aq8_widen8(vb + 2 + 8 * j), p0, acc[j]);
				acc[j + 4] = _mm256_fmadd_ps(aq8_widen8(vb + AQ8_BLOCK + 2 + 8 * j), p1, acc[j + 4]);
			}
		}
		LG_UNROLL
		for (int j = 0; j < 8; j++) _mm256_storeu_ps(out + b0 * LG_QK + 8 * j, acc[j]);
	}
	if (b0 < nbv) {
		__m256 acc[4];
		LG_UNROLL
		for (int j = 0; j < 4; j++) acc[j] = _mm256_setzero_ps();
		for (t = 0; t < n_kv; t++) {
			const uint8_t *vb = v + EROW(rows, t) * v_stride + b0 * AQ8_BLOCK;
			const __m256 p0 = _mm256_mul_ps(_mm256_broadcast_ss(s + t), aq8_scale8(vb));
			LG_UNROLL
			for (int j = 0; j < 4; j++) acc[j] = _mm256_fmadd_ps(aq8_widen8(vb + 2 + 8 * j), p0, acc[j]);
		}
		LG_UNROLL
		for (int j = 0; j < 4; j++) _mm256_storeu_ps(out + b0 * LG_QK + 8 * j, acc[j]);
	}
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
