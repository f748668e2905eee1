// lg_avx512_dec.c: Q8_0 weights against one activation row (decode) with AVX-512 VNNI:
// two blocks of a weight row per 512-bit register, four rows at a time.
//
// Token generation reads every weight once per token. On the 2-core development VM the
// AVX2 direct kernel (lga_direct_q) ran out of instructions before memory bandwidth on
// Q8_0: 11 instructions per block and row (two sign fixes, maddubs, madd, a scalar F16
// scale converted and broadcast per block). Here, per pair of blocks and row:
//  - the quants of both blocks fill one register (a 256-bit load and an insert) and are
//    made unsigned (xor 0x80), so vpdpbusd takes them against the signed activations;
//  - its start value is -128 * sum(x) per block (computed once per call, with the
//    activations' scales laid out per pair), which takes the +128 out again;
//  - the two blocks' F16 scales are picked from one 64-byte load with vpermw and
//    converted together, eight lanes each.
// That is about 6 instructions per block and row instead of 11.
#include "lg.h"

#if defined(__x86_64__)
#include <immintrin.h> // before the target pragma: its functions carry their own targets
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni"))), apply_to = function)
#else
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")
#endif
#include "lg_x86.h"

// Per pair of activation blocks: the two blocks' quants, the vpdpbusd start values
// (lane 0 and lane 8) and the two scales spread over eight lanes each.
typedef struct {
	__m512i q, c;
	__m512 d;
} l5d_pair;

// Four weight rows (rows[0..3]) against the activation pairs xp (nb blocks, even).
LGA void l5d_rows4(const uint8_t *const rows[4], const l5d_pair *xp, int64_t nb, int64_t pf, float out[4]) {
	// word 0 (block b's d) in words 0..7, word 17 (block b+1's d at byte 34) in 8..15
	const __m512i pick = _mm512_setr_epi32(0, 0, 0, 0, 0x00110011, 0x00110011, 0x00110011, 0x00110011, 0, 0, 0, 0, 0, 0,
	                                       0, 0);
	const __m512i flip = _mm512_set1_epi8((char)0x80);
	__m512 acc[4];
	for (int j = 0; j < 4; j++) acc[j] = _mm512_setzero_ps();
	for (int64_t b = 0; b < nb; b += 2) {
		const l5d_pair *x = xp + b / 2;
		const __m512i xq = x->q, xc = x->c;
		const __m512 dx = x->d;
		for (int j = 0; j < 4; j++) {
			const uint8_t *p = rows[j] + b * 34;
			// both lines the pair's 68 bytes touch (one a pair would skip one line in 16)
			_mm_prefetch((const char *)(p + pf), _MM_HINT_T0);
			_mm_prefetch((const char *)(p + pf + 67), _MM_HINT_T0);
			const __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(p + 2))),
			                                     _mm256_loadu_si256((const __m256i *)(p + 36)), 1);
			const __m512i s = _mm512_dpbusd_epi32(xc, _mm512_xor_si512(q, flip), xq);
			const __m512i h = _mm512_permutexvar_epi16(pick, _mm512_loadu_si512((const void *)p));
			const __m512 dw = _mm512_cvtph_ps(_mm512_castsi512_si256(h));
			acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(dw, dx), acc[j]);
		}
	}
	for (int j = 0; j < 4; j++) out[j] = _mm512_reduce_add_ps(acc[j]);
}

// The pairs of the activation row x (nb blocks, even, at most LG_DEC_NB).
LGA void l5d_prep(const uint8_t *x, int64_t nb, l5d_pair *xp) {
	for (int64_t b = 0; b < nb; b += 2) {
		const uint8_t *a = x + b * 34, *c = a + 34;
		l5d_pair *o = xp + b / 2;
		const __m256i qa = _mm256_loadu_si256((const __m256i *)(a + 2)), qc = _mm256_loadu_si256((const __m256i *)(c + 2));
		o->q = _mm512_inserti64x4(_mm512_castsi256_si512(qa), qc, 1);
		const int32_t sa = lga_hsum_i32(_mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm256_castsi256_si128(qa)),
		                                                  _mm256_set1_epi16(1))) +
		                   lga_hsum_i32(_mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm256_extracti128_si256(qa, 1)),
		                                                  _mm256_set1_epi16(1)));
		const int32_t sc = lga_hsum_i32(_mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm256_castsi256_si128(qc)),
		                                                  _mm256_set1_epi16(1))) +
		                   lga_hsum_i32(_mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm256_extracti128_si256(qc, 1)),
		                                                  _mm256_set1_epi16(1)));
		o->c = _mm512_setr_epi32(-128 * sa, 0, 0, 0, 0, 0, 0, 0, -128 * sc, 0, 0, 0, 0, 0, 0, 0);
		o->d = _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_set1_ps(lga_h2f(a))), _mm256_set1_ps(lga_h2f(c)), 1);
	}
}

int l5_dec_q8_0(const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t nb, int64_t r0, int64_t r1, float *dst) {
	if (nb & 1 || nb > LG_DEC_NB || r1 <= r0) return -1;
	l5d_pair xp[LG_DEC_NB / 2];
	l5d_prep(x, nb, xp);
	// The rows of the next group of four lie 4 * wrb further on; short rows (a few KB) are
	// one stream, so a distance of two groups keeps it ahead.
	const int64_t pf = (wrb <= 2560 ? 8 : 4) * wrb;
	for (int64_t r = r0; r < r1; r += 4) {
		const int nr = r1 - r < 4 ? (int)(r1 - r) : 4;
		const uint8_t *rows[4];
		for (int j = 0; j < 4; j++) rows[j] = w + (r + (j < nr ? j : 0)) * wrb;
		float out[4];
		l5d_rows4(rows, xp, nb, pf, out);
		for (int j = 0; j < nr; j++) dst[r + j] = out[j];
	}
	return 0;
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
