// elem_avx512.c: AVX-512 row ops. Only SwiGLU (bound by its exp) gains from the wider
// vectors; the other ops are memory-bound and use the AVX2 code.
#include "elem.h"

#if defined(__x86_64__)
#include <immintrin.h> // before the target pragma: its functions carry their own targets
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq"))), apply_to = function)
#else
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq")
#endif
#include "lg_x86.h"
#include "elem_x512.h"

LGA __m512 e5_swiglu16(__m512 g, __m512 u) {
	const __m512 e = e5_exp(_mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(g), _mm512_set1_epi32((int)0x80000000u))));
	return _mm512_mul_ps(_mm512_div_ps(g, _mm512_add_ps(_mm512_set1_ps(1.0f), e)), u);
}

void elem_swiglu_avx512(const float *g, const float *u, float *y, int64_t n) {
	int64_t i = 0;
	for (; i + 32 <= n; i += 32) {
		const __m512 a = e5_swiglu16(_mm512_loadu_ps(g + i), _mm512_loadu_ps(u + i));
		const __m512 b = e5_swiglu16(_mm512_loadu_ps(g + i + 16), _mm512_loadu_ps(u + i + 16));
		_mm512_storeu_ps(y + i, a);
		_mm512_storeu_ps(y + i + 16, b);
	}
	for (; i < n; i += 16) {
		const __mmask16 m = (__mmask16)(n - i >= 16 ? 0xffff : (1u << (n - i)) - 1);
		_mm512_mask_storeu_ps(y + i, m, e5_swiglu16(_mm512_maskz_loadu_ps(m, g + i), _mm512_maskz_loadu_ps(m, u + i)));
	}
}

// elem_softmax_exp_avx2 on 16 lanes: the same max, exps and double sum (the AVX2 kernel's
// chains over lanes 0-3 and 4-7 of each group of 8 are the two halves of one 8-lane
// chain here, fed the groups in the same order).
float elem_softmax_exp_avx512(float *s, int64_t n) {
	__m512 mv = _mm512_set1_ps(-INFINITY);
	int64_t t = 0;
	for (; t + 16 <= n; t += 16) mv = _mm512_max_ps(mv, _mm512_loadu_ps(s + t));
	float m = _mm512_reduce_max_ps(mv);
	for (; t < n; t++)
		if (s[t] > m) m = s[t];
	const __m512 vm = _mm512_set1_ps(m);
	__m512d sd = _mm512_setzero_pd();
	t = 0;
	for (; t + 16 <= n; t += 16) {
		const __m512 e = e5_exp(_mm512_sub_ps(_mm512_loadu_ps(s + t), vm));
		_mm512_storeu_ps(s + t, e);
		sd = _mm512_add_pd(sd, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
		sd = _mm512_add_pd(sd, _mm512_cvtps_pd(_mm512_extractf32x8_ps(e, 1)));
	}
	for (; t < n; t += 8) { // groups of 8, the last padded with exp(-inf) = 0
		const int64_t r = n - t < 8 ? n - t : 8;
		const __mmask16 k = (__mmask16)((1u << r) - 1);
		const __m512 e = e5_exp(_mm512_sub_ps(_mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), k, s + t), vm));
		_mm512_mask_storeu_ps(s + t, k, e);
		sd = _mm512_add_pd(sd, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
	}
	const __m256d s4 = _mm256_add_pd(_mm512_castpd512_pd256(sd), _mm512_extractf64x4_pd(sd, 1));
	const __m128d h2 = _mm_add_pd(_mm256_castpd256_pd128(s4), _mm256_extractf128_pd(s4, 1));
	const double sum = _mm_cvtsd_f64(_mm_add_sd(h2, _mm_unpackhi_pd(h2, h2)));
	return (float)(1.0 / sum);
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
