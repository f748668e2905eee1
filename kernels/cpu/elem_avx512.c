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

// ea_exp's scheme on 16 lanes; vscalefps applies 2^n with the right overflow and
// subnormal results in one step.
LGA __m512 e5_exp(__m512 x) {
	x = _mm512_max_ps(_mm512_set1_ps(-104.0f), _mm512_min_ps(_mm512_set1_ps(89.0f), x));
	const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
	                                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	__m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
	r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
	__m512 p = _mm512_set1_ps(1.9875691500e-4f);
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
	p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r);
	p = _mm512_add_ps(p, _mm512_set1_ps(1.0f));
	return _mm512_scalef_ps(p, n);
}

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

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
