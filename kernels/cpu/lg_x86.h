// lg_x86.h: x86 SIMD helpers shared by lg_avx2.c, lg_avx2_conv.c and lg_avx512.c.
// Include it after the file's target pragma (it needs AVX2, FMA and F16C).
#ifndef EMBER_LG_X86_H
#define EMBER_LG_X86_H

#include <immintrin.h>
#include "lg.h"

#define LGA static inline __attribute__((always_inline))

LGA float lga_h2f(const uint8_t *p) { return _cvtsh_ss(lg_rd16(p)); }

LGA float lga_hsum(__m256 v) {
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

LGA int32_t lga_hsum_i32(__m256i v) {
	__m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
	return _mm_cvtsi128_si32(s);
}

// 32 unsigned nibbles of a Q4 block's qs: low nibbles (elements 0..15), then high.
LGA __m256i lga_nibbles(const uint8_t *qs) {
	const __m128i q = _mm_loadu_si128((const __m128i *)qs);
	const __m256i v = _mm256_set_m128i(_mm_srli_epi16(q, 4), q);
	return _mm256_and_si256(v, _mm256_set1_epi8(0x0f));
}

// The fifth bits of a Q5 block: byte j is 0x10 when bit j of qh is set.
LGA __m256i lga_hbits(uint32_t qh) {
	const __m256i shuf = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
	                                      2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
	const __m256i bit = _mm256_set1_epi64x(0x8040201008040201LL);
	__m256i v = _mm256_shuffle_epi8(_mm256_set1_epi32((int)qh), shuf);
	v = _mm256_cmpeq_epi8(_mm256_and_si256(v, bit), bit);
	return _mm256_and_si256(v, _mm256_set1_epi8(0x10));
}

// The 32 quants of a weight block, unsigned for Q4_0/Q5_0 (raw, offset not removed),
// Q4_1, Q5_1, and signed for Q8_0.
LGA __m256i lga_wquants(int t, const uint8_t *b) {
	switch (t) {
	case EMBER_Q4_0: return lga_nibbles(b + 2);
	case EMBER_Q4_1: return lga_nibbles(b + 4);
	case EMBER_Q5_0: return _mm256_or_si256(lga_nibbles(b + 6), lga_hbits(lg_rd32(b + 2)));
	case EMBER_Q5_1: return _mm256_or_si256(lga_nibbles(b + 8), lga_hbits(lg_rd32(b + 4)));
	default: return _mm256_loadu_si256((const __m256i *)(b + 2));
	}
}

LGA int lga_offset(int t) { return t == EMBER_Q4_0 ? 8 : t == EMBER_Q5_0 ? 16 : 0; }
LGA int lga_is1(int t) { return t == EMBER_Q4_1 || t == EMBER_Q5_1; }
// Where a weight block's quants (qs) start: after d (and m of the _1 types, qh of Q5).
LGA int lga_qs(int t) {
	return t == EMBER_Q4_1 ? 4 : t == EMBER_Q5_0 ? 6 : t == EMBER_Q5_1 ? 8 : 2;
}
// The bytes of an activation block (Q8_1 for Q4_1 / Q5_1, else Q8_0) and where its
// quants start.
LGA int lga_xbytes(int t) { return lga_is1(t) ? 36 : 34; }
LGA int lga_xqs(int t) { return lga_is1(t) ? 4 : 2; }

// The sum of the 32 signed quants of an activation block at qs: sum(x + 128) - 32 * 128,
// the first from vpsadbw.
LGA int32_t lga_qsum32(const uint8_t *qs) {
	const __m256i u = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)qs), _mm256_set1_epi8((char)0x80));
	return lga_hsum_i32(_mm256_sad_epu8(u, _mm256_setzero_si256())) - 32 * 128;
}

// Sum of products of unsigned weight quants wu (0..31) and signed x in 8 int32 lanes.
LGA __m256i lga_dot_u(__m256i wu, __m256i x) {
	return _mm256_madd_epi16(_mm256_maddubs_epi16(wu, x), _mm256_set1_epi16(1));
}

// 16 bytes at a and at b in the two halves of a register; at the blocks' start: the
// scales, and the fifth bits of the Q5 types, of a row pair.
LGA __m256i lga_pair_head(const uint8_t *a, const uint8_t *b) {
	return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)a)),
	                               _mm_loadu_si128((const __m128i *)b), 1);
}

// The offset off times the sums of a Q8_0/Q8_1 block's quants qs over the elements that
// each int32 lane of a row pair's dot product (lga_direct_p) adds up: the correction
// that takes Q4_0's and Q5_0's offset out of their unsigned quants.
LGA __m128i lga_offset_sums(int off, const uint8_t *qs) {
	const __m128i o8 = _mm_set1_epi8((char)off);
	const __m128i s = _mm_add_epi16(_mm_maddubs_epi16(o8, _mm_loadu_si128((const __m128i *)qs)),
	                                _mm_maddubs_epi16(o8, _mm_loadu_si128((const __m128i *)(qs + 16))));
	return _mm_madd_epi16(s, _mm_set1_epi16(1));
}

// Per block of nx activation rows, for the row pairs of lga_direct_p (lg_avx2.c): dx at
// pd[i * nb + b], and for Q4_0/Q5_0 the offset times the sums of x over the elements
// that each int32 lane of a pair's dot product adds up at pc[4 * (i * nb + b)].
LGA void lga_pair_prep(const int T, const uint8_t *x, int64_t xrb, int nx, int64_t nb, int32_t *pc, float *pd) {
	const int xbs = lga_xbytes(T), xqo = lga_xqs(T), off = lga_offset(T);
	for (int i = 0; i < nx; i++)
		for (int64_t b = 0; b < nb; b++) {
			const uint8_t *xb = x + i * xrb + b * xbs;
			pd[i * nb + b] = lga_h2f(xb);
			if (off) _mm_storeu_si128((__m128i *)(pc + 4 * (i * nb + b)), lga_offset_sums(off, xb + xqo));
		}
}

// Transpose 8 vectors of 8 dwords: out[e] dword l = v[l] dword e.
LGA void lga_transpose8(const __m256i v[8], __m256i out[8]) {
	__m256i t[8], u[8];
	for (int p = 0; p < 4; p++) {
		t[2 * p] = _mm256_unpacklo_epi32(v[2 * p], v[2 * p + 1]);
		t[2 * p + 1] = _mm256_unpackhi_epi32(v[2 * p], v[2 * p + 1]);
	}
	for (int p = 0; p < 2; p++) {
		u[4 * p + 0] = _mm256_unpacklo_epi64(t[4 * p + 0], t[4 * p + 2]);
		u[4 * p + 1] = _mm256_unpackhi_epi64(t[4 * p + 0], t[4 * p + 2]);
		u[4 * p + 2] = _mm256_unpacklo_epi64(t[4 * p + 1], t[4 * p + 3]);
		u[4 * p + 3] = _mm256_unpackhi_epi64(t[4 * p + 1], t[4 * p + 3]);
	}
	for (int e = 0; e < 4; e++) {
		out[e] = _mm256_permute2x128_si256(u[e], u[e + 4], 0x20);
		out[e + 4] = _mm256_permute2x128_si256(u[e], u[e + 4], 0x31);
	}
}

// Transpose 8 blocks of 32 bytes (v[l] = block l) into the interleaved group layout at o.
LGA void lga_store_group(int8_t *o, __m256i v[8]) {
	__m256i out[8];
	lga_transpose8(v, out);
	for (int e = 0; e < 8; e++) _mm256_storeu_si256((__m256i *)(o + 32 * e), out[e]);
}

// Sum 8 vectors: lane l of the result is the sum of the lanes of v[l].
LGA __m256 lga_hsum8(const __m256 v[8]) {
	const __m256 a = _mm256_hadd_ps(v[0], v[1]), b = _mm256_hadd_ps(v[2], v[3]);
	const __m256 c = _mm256_hadd_ps(v[4], v[5]), d = _mm256_hadd_ps(v[6], v[7]);
	const __m256 ab = _mm256_hadd_ps(a, b), cd = _mm256_hadd_ps(c, d);
	// ab: lanes 0-3 partial sums of v0..v3 (low halves), 4-7 of v0..v3 (high halves)
	return _mm256_add_ps(_mm256_permute2f128_ps(ab, cd, 0x20), _mm256_permute2f128_ps(ab, cd, 0x31));
}

// 8 floats to halves, ties to even; NaN becomes sign|0x7e00 as quant.FP32ToFP16.
LGA __m128i lga_f2h8(__m256 v) {
	__m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
	if (!_mm256_testz_ps(nan, nan)) {
		__m128i nm = _mm_packs_epi32(_mm256_castsi256_si128(_mm256_castps_si256(nan)),
		                             _mm256_extracti128_si256(_mm256_castps_si256(nan), 1));
		__m128i canon = _mm_or_si128(_mm_and_si128(h, _mm_set1_epi16((short)0x8000)), _mm_set1_epi16(0x7e00));
		h = _mm_blendv_epi8(h, canon, nm);
	}
	return h;
}

// Float weights: 8 lanes of w (f16, bf16 or f32) at element i.
LGA __m256 lga_fload(int T, const uint8_t *p, int64_t i) {
	switch (T) {
	case EMBER_F16: return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p + 2 * i)));
	case EMBER_BF16: return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(p + 2 * i))), 16));
	default: return _mm256_loadu_ps((const float *)(const void *)(p + 4 * i));
	}
}

LGA float lga_fscalar(int T, const uint8_t *p, int64_t i) {
	switch (T) {
	case EMBER_F16: return lg_h2f(lg_rd16(p + 2 * i));
	case EMBER_BF16: return lg_bf2f(lg_rd16(p + 2 * i));
	default: { float f; memcpy(&f, p + 4 * i, 4); return f; }
	}
}

#endif
