// lg_avx2_conv.c: the AVX2 + FMA + F16C quantize and dequantize of the legacy-quant and
// float types (lg_avx2.c holds the gemm dispatch and its decode kernels).
#include "lg.h"

#if defined(__x86_64__)
#include <immintrin.h> // before the target pragma: its functions carry their own targets
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC target("avx2,fma,f16c")
#endif
#include "lg_x86.h"
// ================================================================ quantize

// C's roundf on 8 lanes: truncate, then step away from zero when |frac| >= 0.5.
LGA __m256 lga_roundf(__m256 v) {
	const __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
	const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
	const __m256 frac = _mm256_and_ps(_mm256_sub_ps(v, t), absmask);
	const __m256 ge = _mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ);
	const __m256 one = _mm256_or_ps(_mm256_set1_ps(1.0f), _mm256_andnot_ps(absmask, v));
	return _mm256_add_ps(t, _mm256_and_ps(ge, one));
}

static void lga_quant_q8(const float *x, uint8_t *y, int64_t nb, int q81) {
	const int bs = q81 ? 36 : 34, qo = q81 ? 4 : 2;
	const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
	for (int64_t ib = 0; ib < nb; ib++) {
		const float *xb = x + ib * LG_QK;
		uint8_t *b = y + ib * bs;
		__m256 v0 = _mm256_loadu_ps(xb), v1 = _mm256_loadu_ps(xb + 8);
		__m256 v2 = _mm256_loadu_ps(xb + 16), v3 = _mm256_loadu_ps(xb + 24);
		__m256 m = _mm256_max_ps(_mm256_max_ps(_mm256_and_ps(v0, absmask), _mm256_and_ps(v1, absmask)),
		                         _mm256_max_ps(_mm256_and_ps(v2, absmask), _mm256_and_ps(v3, absmask)));
		__m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
		m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
		m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
		const float amax = _mm_cvtss_f32(m4);
		const float d = amax / 127.0f, id = d != 0 ? 1.0f / d : 0.0f;
		const __m256 bad = _mm256_or_ps(_mm256_or_ps(_mm256_cmp_ps(v0, v0, _CMP_UNORD_Q), _mm256_cmp_ps(v1, v1, _CMP_UNORD_Q)),
		                                _mm256_or_ps(_mm256_cmp_ps(v2, v2, _CMP_UNORD_Q), _mm256_cmp_ps(v3, v3, _CMP_UNORD_Q)));
		if (!(id <= 3.4e38f) || !(amax <= 3.4e38f) || !_mm256_testz_ps(bad, bad)) {
			// 1/d overflowed, or an infinity or NaN: quant's (and C's) float-to-int
			// conversions of the non-finite products differ from the packing below
			lg_quant_q8_block(xb, b, q81);
			continue;
		}
		lg_wr16(b, lg_f2h(d));
		const __m256 vid = _mm256_set1_ps(id);
		__m256i i0 = _mm256_cvttps_epi32(lga_roundf(_mm256_mul_ps(v0, vid)));
		__m256i i1 = _mm256_cvttps_epi32(lga_roundf(_mm256_mul_ps(v1, vid)));
		__m256i i2 = _mm256_cvttps_epi32(lga_roundf(_mm256_mul_ps(v2, vid)));
		__m256i i3 = _mm256_cvttps_epi32(lga_roundf(_mm256_mul_ps(v3, vid)));
		if (q81) {
			const int32_t s = lga_hsum_i32(_mm256_add_epi32(_mm256_add_epi32(i0, i1), _mm256_add_epi32(i2, i3)));
			lg_wr16(b + 2, lg_f2h((float)s * d));
		}
		__m256i p = _mm256_packs_epi16(_mm256_packs_epi32(i0, i1), _mm256_packs_epi32(i2, i3));
		p = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
		_mm256_storeu_si256((__m256i *)(b + qo), p);
	}
}

// 8 floats to bfloat16 as quant.FP32ToBF16.
LGA __m128i lga_f2bf8(__m256 v) {
	const __m256i u = _mm256_castps_si256(v);
	const __m256i r = _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)),
	                                   _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1)));
	__m256i h = _mm256_srli_epi32(r, 16);
	const __m256i isnan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)), _mm256_set1_epi32(0x7f800000));
	const __m256i qn = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
	h = _mm256_blendv_epi8(h, qn, isnan);
	return _mm_packus_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

int lg_quantize_avx2(int vdt, const float *x, void *yv, int64_t nrows, int64_t n) {
	uint8_t *y = (uint8_t *)yv;
	const int64_t total = nrows * n;
	int64_t i = 0;
	switch (vdt) {
	case EMBER_Q8_0: case EMBER_Q8_1:
		lga_quant_q8(x, y, total / LG_QK, vdt == EMBER_Q8_1);
		return 0;
	case EMBER_F16:
		for (; i + 8 <= total; i += 8) _mm_storeu_si128((__m128i *)(y + 2 * i), lga_f2h8(_mm256_loadu_ps(x + i)));
		for (; i < total; i++) lg_wr16(y + 2 * i, lg_f2h(x[i]));
		return 0;
	case EMBER_BF16:
		for (; i + 8 <= total; i += 8) _mm_storeu_si128((__m128i *)(y + 2 * i), lga_f2bf8(_mm256_loadu_ps(x + i)));
		for (; i < total; i++) lg_wr16(y + 2 * i, lg_f2bf(x[i]));
		return 0;
	case EMBER_F32:
		memcpy(y, x, (size_t)total * 4);
		return 0;
	}
	return -1;
}

// ================================================================ dequantize

LGA void lga_store_i8x32(float *o, __m256i q, __m256 d) {
	const __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);
	_mm256_storeu_ps(o, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lo)), d));
	_mm256_storeu_ps(o + 8, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8))), d));
	_mm256_storeu_ps(o + 16, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(hi)), d));
	_mm256_storeu_ps(o + 24, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8))), d));
}

// d*q + m with the product rounded first (no FMA), as quant does.
LGA __m256 lga_mad_exact(__m256 q, __m256 d, __m256 m) {
	__m256 p = _mm256_mul_ps(q, d);
	LG_OPAQUE(p);
	return _mm256_add_ps(p, m);
}

LGA void lga_store_u8x32_m(float *o, __m256i q, __m256 d, __m256 m) {
	const __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);
	_mm256_storeu_ps(o, lga_mad_exact(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(lo)), d, m));
	_mm256_storeu_ps(o + 8, lga_mad_exact(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(lo, 8))), d, m));
	_mm256_storeu_ps(o + 16, lga_mad_exact(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(hi)), d, m));
	_mm256_storeu_ps(o + 24, lga_mad_exact(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(hi, 8))), d, m));
}

int lg_dequantize_avx2(int t, const void *xv, float *y, int64_t n) {
	const uint8_t *x = (const uint8_t *)xv;
	const int64_t nb = n / LG_QK;
	int64_t i = 0;
	switch (t) {
	case EMBER_F32:
		memcpy(y, x, (size_t)n * 4);
		return 0;
	case EMBER_F16:
		for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + 2 * i))));
		for (; i < n; i++) y[i] = lg_h2f(lg_rd16(x + 2 * i));
		return 0;
	case EMBER_BF16:
		for (; i + 8 <= n; i += 8) {
			const __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(x + 2 * i)));
			_mm256_storeu_ps(y + i, _mm256_castsi256_ps(_mm256_slli_epi32(v, 16)));
		}
		for (; i < n; i++) y[i] = lg_bf2f(lg_rd16(x + 2 * i));
		return 0;
	case EMBER_Q8_0: case EMBER_Q8_1: {
		const int bs = t == EMBER_Q8_1 ? 36 : 34, qo = t == EMBER_Q8_1 ? 4 : 2;
		for (int64_t ib = 0; ib < nb; ib++) {
			const uint8_t *b = x + ib * bs;
			lga_store_i8x32(y + ib * LG_QK, _mm256_loadu_si256((const __m256i *)(b + qo)), _mm256_set1_ps(lga_h2f(b)));
		}
		return 0;
	}
	case EMBER_Q4_0: case EMBER_Q5_0: {
		const int bs = t == EMBER_Q4_0 ? 18 : 22;
		const __m256i off = _mm256_set1_epi8((char)lga_offset(t));
		for (int64_t ib = 0; ib < nb; ib++) {
			const uint8_t *b = x + ib * bs;
			const __m256i q = _mm256_sub_epi8(lga_wquants(t, b), off);
			lga_store_i8x32(y + ib * LG_QK, q, _mm256_set1_ps(lga_h2f(b)));
		}
		return 0;
	}
	case EMBER_Q4_1: case EMBER_Q5_1: {
		const int bs = t == EMBER_Q4_1 ? 20 : 24;
		for (int64_t ib = 0; ib < nb; ib++) {
			const uint8_t *b = x + ib * bs;
			lga_store_u8x32_m(y + ib * LG_QK, lga_wquants(t, b), _mm256_set1_ps(lga_h2f(b)), _mm256_set1_ps(lga_h2f(b + 2)));
		}
		return 0;
	}
	}
	return -1;
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
