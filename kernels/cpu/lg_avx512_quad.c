// lg_avx512_quad.c: the legacy-quant decode products for a few activation rows on
// AVX-512 (split from lg_avx512.c, which calls them): four weight rows per 512-bit
// register (one 128-bit lane each), against up to four activation rows at a time, over
// runs of 32 weight rows that stay in the cache. The 4/5-bit types keep their raw
// unsigned quants; Q8_0 (VNNI only) adds 128 to its signed ones. The offsets come out
// through an integer start value of -offset * sum(x) per block. With VNNI, lg_avx512_dec.c
// takes the rows whose block count suits it; these serve the rest, and AVX-512 without
// VNNI (the 4/5-bit types).
#include "lg.h"

#if defined(__x86_64__)
#include <immintrin.h> // before the target pragma: its functions carry their own targets
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni"))), apply_to = function)
#else
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")
#endif
#include "lg_x86.h"

// Rows j = 0..3 at p[j]; dword at byte offset o of each, as 4 lanes.
LGA __m128i l5_rows32(const uint8_t *const p[4], int64_t o) {
	return _mm_setr_epi32((int)lg_rd32(p[0] + o), (int)lg_rd32(p[1] + o), (int)lg_rd32(p[2] + o), (int)lg_rd32(p[3] + o));
}

// [v0 x4, v1 x4, v2 x4, v3 x4] from the 4 floats of v (first != 0: [v0, 0, 0, 0, v1, 0, ...]).
LGA __m512 l5_spread4(__m128 v, int first) {
	const __m512i idx = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
	const __m512 z = _mm512_castps128_ps512(v);
	return first ? _mm512_maskz_permutexvar_ps(0x1111, idx, z) : _mm512_permutexvar_ps(idx, z);
}

// The 32 quants of the blocks at p[0..3]: elements 0..15 of row j in lane j of *lo,
// 16..31 in *hi, raw (unsigned, offset kept).
LGA void l5_quad_quants(const int T, const uint8_t *const p[4], __m512i *lo, __m512i *hi) {
	if (T == EMBER_Q8_0) { // signed bytes as unsigned + 128 (l5_quad subtracts 128 x sum x)
		__m512i l = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(p[0] + 2)));
		__m512i h = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(p[0] + 18)));
		// (the lane must be a constant before unrolling: clang rejects a loop's j)
#define L5Q_INS(j)                                                                  \
	l = _mm512_inserti32x4(l, _mm_loadu_si128((const __m128i *)(p[j] + 2)), j); \
	h = _mm512_inserti32x4(h, _mm_loadu_si128((const __m128i *)(p[j] + 18)), j)
		L5Q_INS(1);
		L5Q_INS(2);
		L5Q_INS(3);
#undef L5Q_INS
		const __m512i flip = _mm512_set1_epi8((char)0x80);
		*lo = _mm512_xor_si512(l, flip);
		*hi = _mm512_xor_si512(h, flip);
		return;
	}
	const int qo = lga_qs(T);
	__m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(p[0] + qo)));
	v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(p[1] + qo)), 1);
	v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(p[2] + qo)), 2);
	v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(p[3] + qo)), 3);
	const __m512i m = _mm512_set1_epi8(0x0f);
	*lo = _mm512_and_si512(v, m);
	*hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m);
	if (T == EMBER_Q5_0 || T == EMBER_Q5_1) {
		const __m512i idx = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
		const __m512i h = _mm512_permutexvar_epi32(idx, _mm512_castsi128_si512(l5_rows32(p, T == EMBER_Q5_0 ? 2 : 4)));
		const __m512i sl = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1));
		const __m512i sh = _mm512_broadcast_i32x4(_mm_setr_epi8(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
		const __m512i bit = _mm512_set1_epi64(0x8040201008040201LL), b5 = _mm512_set1_epi8(0x10);
		*lo = _mm512_mask_add_epi8(*lo, _mm512_test_epi8_mask(_mm512_shuffle_epi8(h, sl), bit), *lo, b5);
		*hi = _mm512_mask_add_epi8(*hi, _mm512_test_epi8_mask(_mm512_shuffle_epi8(h, sh), bit), *hi, b5);
	}
}

// Sum of u8 x s8 products of (lo, xl) and (hi, xh) added to c, per 4-byte lane group.
LGA __m512i l5_dot2(const int vnni, __m512i c, __m512i lo, __m512i xl, __m512i hi, __m512i xh) {
	if (vnni) return _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(c, lo, xl), hi, xh);
	const __m512i p = _mm512_add_epi16(_mm512_maddubs_epi16(lo, xl), _mm512_maddubs_epi16(hi, xh));
	return _mm512_add_epi32(c, _mm512_madd_epi16(p, _mm512_set1_epi16(1)));
}

// Up to 4 weight rows (nr; missing rows repeat row 0) against NX activation rows (1..4).
// Q8_0 only with VNNI (its unsigned + 128 quants would saturate vpmaddubsw).
LGA void l5_quad(const int T, const int vnni, const int NX, const uint8_t *w, int64_t wrb, int nr, const uint8_t *x,
                 int64_t xrb, int64_t nb, float *dst, int64_t ldd) {
	const int wbs = lg_type_bytes(T), is1 = lga_is1(T), xbs = lga_xbytes(T), xqo = lga_xqs(T);
	const int off = T == EMBER_Q8_0 ? 128 : lga_offset(T);
	const __m128i pick_d = _mm_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1);
	const __m128i pick_m = _mm_setr_epi8(2, 3, 6, 7, 10, 11, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1);
	const uint8_t *row[4];
	for (int j = 0; j < 4; j++) row[j] = w + (j < nr ? j : 0) * wrb;
	__m512 acc[4];
	for (int i = 0; i < NX; i++) acc[i] = _mm512_setzero_ps();
	for (int64_t b = 0; b < nb; b++) {
		__m512i xl[4], xh[4], c[4];
		__m512 dx[4], sx[4];
		for (int i = 0; i < NX; i++) {
			const uint8_t *xb = x + i * xrb + b * xbs;
			xl[i] = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(xb + xqo)));
			xh[i] = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(xb + xqo + 16)));
			dx[i] = _mm512_set1_ps(lga_h2f(xb));
			if (is1) sx[i] = _mm512_set1_ps(lga_h2f(xb + 2));
			c[i] = _mm512_setzero_si512();
			if (off) {
				const __m512i o8 = _mm512_set1_epi8((char)off);
				c[i] = _mm512_sub_epi32(_mm512_setzero_si512(), l5_dot2(vnni, _mm512_setzero_si512(), o8, xl[i], o8, xh[i]));
			}
		}
		const uint8_t *p[4];
		for (int j = 0; j < 4; j++) p[j] = row[j] + b * wbs;
		if (!(b & 1))
			for (int j = 0; j < 4; j++) _mm_prefetch((const char *)(p[j] + 4 * wrb), _MM_HINT_T0);
		__m512i lo, hi;
		l5_quad_quants(T, p, &lo, &hi);
		const __m128i dm = l5_rows32(p, 0); // d | m << 16 of each row (m only for _1 types)
		const __m512 dw = l5_spread4(_mm_cvtph_ps(_mm_shuffle_epi8(dm, pick_d)), 0);
		__m512 mw = _mm512_setzero_ps();
		if (is1) mw = l5_spread4(_mm_cvtph_ps(_mm_shuffle_epi8(dm, pick_m)), 1);
		for (int i = 0; i < NX; i++) {
			const __m512i sum = l5_dot2(vnni, c[i], lo, xl[i], hi, xh[i]);
			acc[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), _mm512_mul_ps(dw, dx[i]), acc[i]);
			if (is1) acc[i] = _mm512_fmadd_ps(mw, sx[i], acc[i]);
		}
	}
	for (int i = 0; i < NX; i++) {
		// the four lanes of each row: pairs, then the pair sums
		__m512 t = _mm512_add_ps(acc[i], _mm512_permute_ps(acc[i], 0x4e));
		t = _mm512_add_ps(t, _mm512_permute_ps(t, 0xb1));
		float r4[16];
		_mm512_storeu_ps(r4, t);
		for (int j = 0; j < nr; j++) dst[i * ldd + j] = r4[4 * j];
	}
}

#define L5_QUAD_FN(T, SUF)                                                                                  \
	void l5_quad_##SUF(int vnni, const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb, int64_t nx, \
	                          int64_t nb, int64_t r0, int64_t r1, float *dst, int64_t ldd) {                  \
		for (int64_t a = r0; a < r1; a += 32) /* runs of weight rows that stay in the cache */             \
		for (int64_t i0 = 0; i0 < nx; i0 += 4) {                                                             \
			const int nxx = (int)(nx - i0 < 4 ? nx - i0 : 4);                                                \
			const int64_t z = r1 - a < 32 ? r1 : a + 32;                                                     \
			for (int64_t r = a; r < z; r += 4) {                                                             \
				const int nr = (int)(z - r < 4 ? z - r : 4);                                                 \
				const uint8_t *wp = w + r * wrb, *xp = x + i0 * xrb;                                         \
				float *dp = dst + i0 * ldd + r;                                                              \
				switch (nxx * 2 + vnni) {                                                                    \
				case 2: l5_quad(T, 0, 1, wp, wrb, nr, xp, xrb, nb, dp, ldd); break;                          \
				case 3: l5_quad(T, 1, 1, wp, wrb, nr, xp, xrb, nb, dp, ldd); break;                          \
				case 4: l5_quad(T, 0, 2, wp, wrb, nr, xp, xrb, nb, dp, ldd); break;                          \
				case 5: l5_quad(T, 1, 2, wp, wrb, nr, xp, xrb, nb, dp, ldd); break;                          \
				case 6: l5_quad(T, 0, 3, wp, wrb, nr, xp, xrb, nb, dp, ldd); break;                          \
				case 7: l5_quad(T, 1, 3, wp, wrb, nr, xp, xrb, nb, dp, ldd); break;                          \
				case 8: l5_quad(T, 0, 4, wp, wrb, nr, xp, xrb, nb, dp, ldd); break;                          \
				default: l5_quad(T, 1, 4, wp, wrb, nr, xp, xrb, nb, dp, ldd); break;                         \
				}                                                                                            \
			}                                                                                                \
		}                                                                                                    \
	}

L5_QUAD_FN(EMBER_Q4_0, q4_0)
L5_QUAD_FN(EMBER_Q4_1, q4_1)
L5_QUAD_FN(EMBER_Q5_0, q5_0)
L5_QUAD_FN(EMBER_Q5_1, q5_1)
L5_QUAD_FN(EMBER_Q8_0, q8_0)

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
