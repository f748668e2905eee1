// lg_avx2.c: AVX2 + FMA + F16C paths of the legacy-quant and float kernels: the gemm
// dispatch with its streaming (decode) kernels (quantize and dequantize: lg_avx2_conv.c).
//
// gemm has two shapes:
//  - nx < LG_TILED_NX (decode, small batches): stream the weights in their GGUF layout,
//    4 rows at a time against up to 3 activation rows held in cache; the 4/5-bit types
//    put two rows' quants in one register (lga_direct_p). Memory-bound.
//  - larger nx (prefill, lg_avx2_tile.c): lg_rows8.h for the quantized types, eight
//    weight rows a vector, their blocks unpacked once per 128 activation rows with the
//    quants interleaved four bytes at a time, the activations broadcast as they lie.
//
// Unsigned weights (there and in the direct kernels): Q4_0/Q5_0 are used as their raw
// nibbles (0..15 / 0..31) and the offset (8 or 16) is taken out with the activation
// block's sum (an integer correction); Q4_1 and Q5_1 are unsigned already and add m*s
// per block. Q8_0 uses |w| * sign(x, w) (so a weight of -128 works; activations from the
// quantizer are within +-127).
#include "lg.h"

#if defined(__x86_64__)
#include <immintrin.h> // before the target pragma: its functions carry their own targets
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC target("avx2,fma,f16c")
#endif
#include "lg_x86.h"

// ================================================================ gemm: decode (direct)

#include "lg_direct.h"

// Two rows at once for the 4- and 5-bit types: the 16 quant bytes of rows a and b fill
// one register, so one AND gives the low nibbles (elements 0..15) of both rows and a shift
// and AND the high ones (16..31). Activations are broadcast to both halves to match. The
// fifth bits are picked from head (lga_pair_head), whose halves hold qh at the same place.
LGA void lga_pair_quants(const int T, const uint8_t *a, const uint8_t *b, __m256i head, __m256i *lo, __m256i *hi) {
	const int qo = lga_qs(T);
	const __m256i v = lga_pair_head(a + qo, b + qo);
	const __m256i m = _mm256_set1_epi8(0x0f);
	*lo = _mm256_and_si256(v, m);
	*hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m);
	if (T == EMBER_Q5_0 || T == EMBER_Q5_1) {
		const char h = T == EMBER_Q5_0 ? 2 : 4; // qh's offset in the block
		const __m256i sl = _mm256_setr_epi8(h, h, h, h, h, h, h, h, h + 1, h + 1, h + 1, h + 1, h + 1, h + 1, h + 1, h + 1,
		                                    h, h, h, h, h, h, h, h, h + 1, h + 1, h + 1, h + 1, h + 1, h + 1, h + 1, h + 1);
		const __m256i sh = _mm256_add_epi8(sl, _mm256_set1_epi8(2));
		const __m256i bit = _mm256_set1_epi64x(0x8040201008040201LL), b5 = _mm256_set1_epi8(0x10);
		const __m256i hl = _mm256_cmpeq_epi8(_mm256_and_si256(_mm256_shuffle_epi8(head, sl), bit), bit);
		const __m256i hh = _mm256_cmpeq_epi8(_mm256_and_si256(_mm256_shuffle_epi8(head, sh), bit), bit);
		*lo = _mm256_or_si256(*lo, _mm256_and_si256(hl, b5));
		*hi = _mm256_or_si256(*hi, _mm256_and_si256(hh, b5));
	}
}

// What every row pair needs of activation block b of row i is computed once per run of
// rows (lga_pair_prep, lg_x86.h) instead of once per 4 rows: the offset correction of
// Q4_0/Q5_0 (lanes 0..3 of xc below) at pc[4 * (i * nb + b)], and dx at pd[i * nb + b].
// With that, the scales and fifth bits taken from one 16-byte load per row (lga_pair_head)
// instead of 8 scalar loads and their inserts, and no accumulator spilled any more, Q5_0
// nx=1 on one thread (alternating builds, medians of 6) 2048x1408 in cache 8.3 -> 10.1
// GB/s, from memory 7.8 -> 9.0, 4096x4096 7.8 -> 8.8 (a second round: +25%, +18%, +12%);
// Q4_0, Q4_1 even. Bit-identical results.
#define LGA_PREP_NB 512 // blocks (k <= 16384; 30 KB of stack); longer rows compute them inline

// NP row pairs (1..2; rows 2p and 2p+1 of w, the second one repeating the first when
// odd) against NX activation rows (1..3); PRE: with lga_pair_prep's pc and pd.
LGA void lga_direct_p(const int T, const int NP, const int NX, const int PRE, const uint8_t *w, int64_t wrb, int odd,
                      const uint8_t *x, int64_t xrb, int64_t nb, const int32_t *pc, const float *pd, float *dst,
                      int64_t ldd) {
	const int wbs = lg_type_bytes(T), is1 = lga_is1(T), xbs = lga_xbytes(T), xqo = lga_xqs(T);
	const int off = lga_offset(T);
	const __m256i ones = _mm256_set1_epi16(1);
	// rows 2p and 2p+1 of the pairs
	const uint8_t *rr[4];
	for (int j = 0; j < 4; j++) {
		const int p = j / 2 < NP ? j / 2 : 0;
		rr[j] = w + (2 * p + (j & 1)) * wrb;
		if ((j & 1) && odd && p == NP - 1) rr[j] = rr[j - 1];
	}
	// the scales come out of the heads as rows 0, 2, 1, 3 (pair 1 repeating pair 0 when
	// NP == 1): spread[p] puts row 2p's in lanes 0..3 and row 2p+1's in lanes 4..7
	const __m256i spread[2] = {_mm256_setr_epi32(0, 0, 0, 0, 2, 2, 2, 2), _mm256_setr_epi32(1, 1, 1, 1, 3, 3, 3, 3)};
	const __m256 first = _mm256_castsi256_ps(_mm256_setr_epi32(-1, 0, 0, 0, -1, 0, 0, 0));
	__m256 acc[3][2];
	for (int i = 0; i < NX; i++)
		for (int p = 0; p < NP; p++) acc[i][p] = _mm256_setzero_ps();
	for (int64_t b = 0; b < nb; b++) {
		__m256i xl[3], xh[3], xc[3];
		float dx[3];
		__m256 sx[3];
		for (int i = 0; i < NX; i++) {
			const uint8_t *xb = x + i * xrb + b * xbs;
			xl[i] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(xb + xqo)));
			xh[i] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(xb + xqo + 16)));
			if (is1) sx[i] = _mm256_set1_ps(lga_h2f(xb + 2));
			if (PRE) {
				dx[i] = pd[i * nb + b];
				if (off) xc[i] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(pc + 4 * (i * nb + b))));
				continue;
			}
			dx[i] = lga_h2f(xb);
			if (off) xc[i] = _mm256_broadcastsi128_si256(lga_offset_sums(off, xb + xqo));
		}
		const int64_t bo = b * wbs;
		__m256i head[2];
		for (int p = 0; p < NP; p++) head[p] = lga_pair_head(rr[2 * p] + bo, rr[2 * p + 1] + bo);
		// d (and m, _1 types) of rows 0, 2, 1, 3 in words 0..3 (4..7)
		const __m256i u = _mm256_unpacklo_epi16(head[0], head[NP - 1]);
		const __m128i dm = _mm_unpacklo_epi32(_mm256_castsi256_si128(u), _mm256_extracti128_si256(u, 1));
		const __m128 d4 = _mm_cvtph_ps(dm);
		__m128 m4 = _mm_setzero_ps();
		if (is1) m4 = _mm_cvtph_ps(_mm_unpackhi_epi64(dm, dm));
		{ // a group of 4 rows LG_PF_ROWS ahead as one stream, 4 * wbs (72..96) bytes a
		  // block: faster than each row's block at every shape measured (Q5_0 2048x1408
		  // 7.4 -> 8.5 GB/s on two threads, 4096x4096 9.8 -> 10.9; Q4_0 4096x4096 8.2 ->
		  // 9.9; session 16)
			const char *p = (const char *)(w + LG_PF_ROWS * wrb + b * 4 * wbs);
			_mm_prefetch(p, _MM_HINT_T0);
			_mm_prefetch(p + 64, _MM_HINT_T0);
		}
		__m256 dd4[3];
		for (int i = 0; i < NX; i++) dd4[i] = _mm256_castps128_ps256(_mm_mul_ps(d4, _mm_set1_ps(dx[i])));
		for (int p = 0; p < NP; p++) {
			__m256i lo, hi;
			lga_pair_quants(T, rr[2 * p] + bo, rr[2 * p + 1] + bo, head[p], &lo, &hi);
			__m256 mw = _mm256_setzero_ps();
			if (is1) mw = _mm256_and_ps(_mm256_permutevar8x32_ps(_mm256_castps128_ps256(m4), spread[p]), first);
			for (int i = 0; i < NX; i++) {
				__m256i s = _mm256_madd_epi16(_mm256_add_epi16(_mm256_maddubs_epi16(lo, xl[i]), _mm256_maddubs_epi16(hi, xh[i])), ones);
				if (off) s = _mm256_sub_epi32(s, xc[i]);
				const __m256 dd = _mm256_permutevar8x32_ps(dd4[i], spread[p]);
				acc[i][p] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), dd, acc[i][p]);
				if (is1) acc[i][p] = _mm256_fmadd_ps(mw, sx[i], acc[i][p]);
			}
		}
	}
	for (int i = 0; i < NX; i++)
		for (int p = 0; p < NP; p++) {
			const __m128 lo = _mm256_castps256_ps128(acc[i][p]), hi = _mm256_extractf128_ps(acc[i][p], 1);
			__m128 s = _mm_hadd_ps(lo, hi);
			s = _mm_hadd_ps(s, s); // lanes: row a, row b
			dst[i * ldd + 2 * p] = _mm_cvtss_f32(s);
			if (!(odd && p == NP - 1)) dst[i * ldd + 2 * p + 1] = _mm_cvtss_f32(_mm_movehdup_ps(s));
		}
}

#define LGA_PAIR_CASES(T, PRE)                                                                         \
	switch (np * 4 + nxx) {                                                                              \
	case 4 + 1: lga_direct_p(T, 1, 1, PRE, wp, wrb, odd, xp, xrb, nb, pc, pd, dp, ldd); break;           \
	case 4 + 2: lga_direct_p(T, 1, 2, PRE, wp, wrb, odd, xp, xrb, nb, pc, pd, dp, ldd); break;           \
	case 4 + 3: lga_direct_p(T, 1, 3, PRE, wp, wrb, odd, xp, xrb, nb, pc, pd, dp, ldd); break;           \
	case 8 + 1: lga_direct_p(T, 2, 1, PRE, wp, wrb, odd, xp, xrb, nb, pc, pd, dp, ldd); break;           \
	case 8 + 2: lga_direct_p(T, 2, 2, PRE, wp, wrb, odd, xp, xrb, nb, pc, pd, dp, ldd); break;           \
	default: lga_direct_p(T, 2, 3, PRE, wp, wrb, odd, xp, xrb, nb, pc, pd, dp, ldd); break;             \
	}

#define LGA_PAIR_FN(NAME, T)                                                                             \
	static void NAME(const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb, int64_t nx,           \
	                 int64_t kk, int64_t r0, int64_t r1, float *dst, int64_t ldd) {                       \
		const int64_t nb = kk / LG_QK;                                                                    \
		const int pre = nb <= LGA_PREP_NB;                                                                \
		int32_t pc[LG_DIRECT_NX * LGA_PREP_NB * 4];                                                       \
		float pd[LG_DIRECT_NX * LGA_PREP_NB];                                                             \
		for (int64_t a = r0; a < r1; a += LG_RUN)                                                         \
		for (int64_t i0 = 0; i0 < nx; i0 += LG_DIRECT_NX) {                                               \
			const int nxx = (int)(nx - i0 < LG_DIRECT_NX ? nx - i0 : LG_DIRECT_NX);                       \
			const int64_t z = r1 - a < LG_RUN ? r1 : a + LG_RUN;                                          \
			const uint8_t *xp = x + i0 * xrb;                                                             \
			if (pre) lga_pair_prep(T, xp, xrb, nxx, nb, pc, pd);                                          \
			for (int64_t r = a; r < z; r += 4) {                                                          \
				const int nr = (int)(z - r < 4 ? z - r : 4), np = (nr + 1) / 2, odd = nr & 1;             \
				const uint8_t *wp = w + r * wrb;                                                          \
				float *dp = dst + i0 * ldd + r;                                                           \
				if (pre) LGA_PAIR_CASES(T, 1)                                                             \
				else LGA_PAIR_CASES(T, 0)                                                                 \
			}                                                                                             \
		}                                                                                                 \
	}

LGA_PAIR_FN(lga_pair_q4_0, EMBER_Q4_0)
LGA_PAIR_FN(lga_pair_q4_1, EMBER_Q4_1)
LGA_PAIR_FN(lga_pair_q5_0, EMBER_Q5_0)
LGA_PAIR_FN(lga_pair_q5_1, EMBER_Q5_1)

LGA void lga_direct_f(const int T, const int NR, const int NX, const uint8_t *w, int64_t wrb,
                      const uint8_t *x, int64_t xrb, int64_t k, float *dst, int64_t ldd) {
	const int es = T == EMBER_F32 ? 4 : 2;
	__m256 acc[3][4], acc2[3][4];
	for (int i = 0; i < NX; i++)
		for (int r = 0; r < NR; r++) acc[i][r] = _mm256_setzero_ps(), acc2[i][r] = _mm256_setzero_ps();
	int64_t j = 0;
	for (; j + 16 <= k; j += 16) {
		__m256 xa[3], xb[3];
		for (int i = 0; i < NX; i++) xa[i] = lga_fload(T, x + i * xrb, j), xb[i] = lga_fload(T, x + i * xrb, j + 8);
		for (int r = 0; r < NR; r++) {
			// the same bytes of the next group's row (the caller steps 4 rows at a time; they
			// lie one after another), as lga_direct_q does: a row of a 2,048-column F16
			// matrix is 4 KB, so a prefetch a fixed distance ahead in the row found each
			// group's start cold (two threads, 8,192 x 2,048: 19-24 -> 24-30 GB/s; 1B F16
			// tg64 10.2-12.6 -> 11.6-16.1 alternating; session 51)
			_mm_prefetch((const char *)(w + (r + 4) * wrb + es * j), _MM_HINT_T0);
			const __m256 wa = lga_fload(T, w + r * wrb, j), wb = lga_fload(T, w + r * wrb, j + 8);
			for (int i = 0; i < NX; i++) {
				acc[i][r] = _mm256_fmadd_ps(wa, xa[i], acc[i][r]);
				acc2[i][r] = _mm256_fmadd_ps(wb, xb[i], acc2[i][r]);
			}
		}
	}
	for (; j + 8 <= k; j += 8)
		for (int r = 0; r < NR; r++) {
			const __m256 wa = lga_fload(T, w + r * wrb, j);
			for (int i = 0; i < NX; i++) acc[i][r] = _mm256_fmadd_ps(wa, lga_fload(T, x + i * xrb, j), acc[i][r]);
		}
	for (int i = 0; i < NX; i++)
		for (int r = 0; r < NR; r++) {
			float s = lga_hsum(_mm256_add_ps(acc[i][r], acc2[i][r]));
			for (int64_t jj = j; jj < k; jj++) s += lga_fscalar(T, w + r * wrb, jj) * lga_fscalar(T, x + i * xrb, jj);
			dst[i * ldd + r] = s;
		}
}

LGA_DIRECT_FN(lga_direct_q8_0, lga_direct_q, EMBER_Q8_0, kk / LG_QK)
LGA_DIRECT_FN(lga_direct_f16, lga_direct_f, EMBER_F16, kk)
LGA_DIRECT_FN(lga_direct_bf16, lga_direct_f, EMBER_BF16, kk)
LGA_DIRECT_FN(lga_direct_f32, lga_direct_f, EMBER_F32, kk)

int lg_gemm_avx2(int wtype, const uint8_t *w, int64_t wrb, const uint8_t *xq, int64_t xrb, int64_t nx,
                 int64_t k, int64_t r0, int64_t r1, float *dst, int64_t ldd) {
	const uint8_t *w0 = w;
#ifndef LG_TILED_NX
#define LG_TILED_NX 8 // below, streaming the weights once per 3 activation rows beats unpacking them
#endif
	if (nx < LG_TILED_NX) {
		switch (wtype) {
		case EMBER_Q4_0: lga_pair_q4_0(w0, wrb, xq, xrb, nx, k, r0, r1, dst, ldd); return 0;
		case EMBER_Q4_1: lga_pair_q4_1(w0, wrb, xq, xrb, nx, k, r0, r1, dst, ldd); return 0;
		case EMBER_Q5_0: lga_pair_q5_0(w0, wrb, xq, xrb, nx, k, r0, r1, dst, ldd); return 0;
		case EMBER_Q5_1: lga_pair_q5_1(w0, wrb, xq, xrb, nx, k, r0, r1, dst, ldd); return 0;
		case EMBER_Q8_0: lga_direct_q8_0(w0, wrb, xq, xrb, nx, k, r0, r1, dst, ldd); return 0;
		case EMBER_F16: lga_direct_f16(w0, wrb, xq, xrb, nx, k, r0, r1, dst, ldd); return 0;
		case EMBER_BF16: lga_direct_bf16(w0, wrb, xq, xrb, nx, k, r0, r1, dst, ldd); return 0;
		case EMBER_F32: lga_direct_f32(w0, wrb, xq, xrb, nx, k, r0, r1, dst, ldd); return 0;
		}
		return -1;
	}
	switch (wtype) {
	case EMBER_Q4_0: case EMBER_Q4_1: case EMBER_Q5_0: case EMBER_Q5_1: case EMBER_Q8_0:
		lg_tiled_q_avx2(wtype, w, wrb, xq, xrb, nx, k, r0, r1, dst, ldd);
		return 0;
	case EMBER_F16: case EMBER_BF16: case EMBER_F32:
		lg_tiled_f_avx2(wtype, w, wrb, xq, xrb, nx, k, r0, r1, dst, ldd);
		return 0;
	}
	return -1;
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
