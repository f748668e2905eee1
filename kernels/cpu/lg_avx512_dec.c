// lg_avx512_dec.c: the legacy-quant types against a few activation rows (decode) with
// AVX-512 VNNI: several blocks of one weight row per 512-bit register, four weight rows
// at a time, the activations laid out once per call to match.
//
// Token generation reads every weight once per token. On the 2-core development VM the
// older kernels ran out of instructions before memory bandwidth: the AVX2 direct kernel
// (lga_direct_q) spends 11 instructions per Q8_0 block and row (two sign fixes, maddubs,
// madd, a scalar F16 scale converted and broadcast per block), and the quad kernels
// (lg_avx512_quad.c: four rows' blocks in one register) gather four rows' scales with
// scalar loads for every block. Here the scales of the blocks in a register come from
// one or two 64-byte loads of the row with a word permute, converted together.
//  - Q8_0: two blocks a register (a 256-bit load and an insert), made unsigned (xor
//    0x80) for vpdpbusd against the signed activations, its start value -128 * sum(x)
//    per block taking the +128 out again. In cache 1.7x the AVX2 direct kernel.
//  - Q4_0, Q4_1, Q5_0, Q5_1 (below): four blocks a register.
// Up to four activation rows share each pass over the weights (more take several passes;
// from L16_MIN_NX rows lg_vnni16.h takes over); the activations' layout for four rows
// of 256 blocks (one of 1,024) is 96 KB of stack at the most (LG_DEC_XB).
// Llama-3.2-1B tg128 on two threads, alternating with the earlier kernels: Q8_0 +4%, Q4_0
// +5%, Q4_1 +18%, Q5_0 even, Q5_1 +12% (memory-bound, so less than the kernels' gain).
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

// Four weight rows (rows[0..3]) against NX activation rows' pairs xp (nb blocks, even;
// pair g of row i at xp[g * NX + i]): out[i][j].
LGA void l5d_rows4(const int NX, const uint8_t *const rows[4], const l5d_pair *xp, int64_t nb, int64_t pf,
                   float out[4][4]) {
	// word 0 (block b's d) in words 0..7, word 17 (block b+1's d at byte 34) in 8..15
	const __m512i pick = _mm512_setr_epi32(0, 0, 0, 0, 0x00110011, 0x00110011, 0x00110011, 0x00110011, 0, 0, 0, 0, 0, 0,
	                                       0, 0);
	const __m512i flip = _mm512_set1_epi8((char)0x80);
	__m512 acc[4][4];
	for (int j = 0; j < 4; j++)
		for (int i = 0; i < NX; i++) acc[j][i] = _mm512_setzero_ps();
	for (int64_t b = 0; b < nb; b += 2) {
		const l5d_pair *x = xp + b / 2 * NX;
		for (int j = 0; j < 4; j++) {
			const uint8_t *p = rows[j] + b * 34;
			// both lines the pair's 68 bytes touch (one a pair would skip one line in 16)
			_mm_prefetch((const char *)(p + pf), _MM_HINT_T0);
			_mm_prefetch((const char *)(p + pf + 67), _MM_HINT_T0);
			const __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(p + 2))),
			                                     _mm256_loadu_si256((const __m256i *)(p + 36)), 1);
			const __m512i qu = _mm512_xor_si512(q, flip);
			const __m512i h = _mm512_permutexvar_epi16(pick, _mm512_loadu_si512((const void *)p));
			const __m512 dw = _mm512_cvtph_ps(_mm512_castsi512_si256(h));
			for (int i = 0; i < NX; i++) {
				const __m512i s = _mm512_dpbusd_epi32(x[i].c, qu, x[i].q);
				acc[j][i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(dw, x[i].d), acc[j][i]);
			}
		}
	}
	for (int j = 0; j < 4; j++)
		for (int i = 0; i < NX; i++) out[i][j] = _mm512_reduce_add_ps(acc[j][i]);
}

// The pairs of the activation row x (nb blocks, even) at xp[g * nx] (pair g).
LGA void l5d_prep(const uint8_t *x, int64_t nb, l5d_pair *xp, int nx) {
	for (int64_t b = 0; b < nb; b += 2) {
		const uint8_t *a = x + b * 34, *c = a + 34;
		l5d_pair *o = xp + b / 2 * nx;
		const __m256i qa = _mm256_loadu_si256((const __m256i *)(a + 2)), qc = _mm256_loadu_si256((const __m256i *)(c + 2));
		o->q = _mm512_inserti64x4(_mm512_castsi256_si512(qa), qc, 1);
		o->c = _mm512_setr_epi32(-128 * lga_qsum32(a + 2), 0, 0, 0, 0, 0, 0, 0, -128 * lga_qsum32(c + 2), 0, 0, 0, 0, 0, 0,
		                         0);
		o->d = _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_set1_ps(lga_h2f(a))), _mm256_set1_ps(lga_h2f(c)), 1);
	}
}

// ---------------------------------------------------------------- Q4_0, Q4_1, Q5_0, Q5_1
// Four blocks of a row per register (one 128-bit lane each): the low nibbles (elements
// 0..15) of block j in lane j of one register, the high ones (16..31) in another, the
// fifth bits of Q5 added under masks made of qh's two halves. The four blocks' scales
// (and Q5's qh) are picked from two overlapping 64-byte loads with one vpermt2w each.

// Per group of four activation blocks: elements 0..15 of block j in 128-bit lane j of xl,
// 16..31 in xh, the start values (Q4_0 / Q5_0: -offset * sum(x) in lane 4j), dx over
// lanes 4j..4j+3 and (Q4_1 / Q5_1) the blocks' s in lane 4j.
typedef struct {
	__m512i xl, xh, c;
	__m512 d, s;
} l5d_quad;

LGA __m512i l5d_lanes16(const uint8_t *p, int64_t stride) {
	__m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)p));
	v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(p + stride)), 1);
	v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(p + 2 * stride)), 2);
	return _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(p + 3 * stride)), 3);
}

// The groups of the activation row x (nb blocks, a multiple of 4) at xq[g * nx] (group g).
LGA void l5d_prep4(const int T, const uint8_t *x, int64_t nb, l5d_quad *xq, int nx) {
	const int is1 = lga_is1(T), xbs = lga_xbytes(T), xqo = lga_xqs(T), off = lga_offset(T);
	for (int64_t b = 0; b < nb; b += 4) {
		const uint8_t *a = x + b * xbs;
		l5d_quad *o = xq + b / 4 * nx;
		o->xl = l5d_lanes16(a + xqo, xbs);
		o->xh = l5d_lanes16(a + xqo + 16, xbs);
		float d[16], sv[16];
		int32_t c[16];
		for (int j = 0; j < 4; j++) {
			const uint8_t *xb = a + j * xbs;
			const int32_t sum = lga_qsum32(xb + xqo);
			for (int l = 0; l < 4; l++) {
				d[4 * j + l] = lga_h2f(xb);
				c[4 * j + l] = l == 0 ? -off * sum : 0;
				sv[4 * j + l] = l == 0 && is1 ? lga_h2f(xb + 2) : 0;
			}
		}
		o->c = _mm512_loadu_si512((const void *)c);
		o->d = _mm512_loadu_ps(d);
		o->s = _mm512_loadu_ps(sv);
	}
}

// The vpermt2w index of the 16-bit word at byte o of a group of four blocks (qb bytes),
// taken from the loads at 0 and at qb - 64.
LGA int16_t l5d_word(int o, int qb) { return (int16_t)(o + 1 < 64 ? o / 2 : 32 + (o - (qb - 64)) / 2); }

// Four weight rows against NX activation rows' groups xq (nb blocks, a multiple of 4;
// group g of row i at xq[g * NX + i]): out[i][j].
LGA void l5d_rows4_q(const int T, const int NX, const uint8_t *const rows[4], const l5d_quad *xq, int64_t nb,
                     int64_t pf, float out[4][4]) {
	const int is1 = lga_is1(T), is5 = T == EMBER_Q5_0 || T == EMBER_Q5_1, bs = lg_type_bytes(T);
	const int qo = lga_qs(T), ho = is1 ? 4 : 2;
	const int qb = 4 * bs, o2 = qb - 64;
	// words 0..15: the blocks' d over four lanes each; 16..31: their m (_1 types);
	// hpick: qh's low halves of the four blocks, then its high halves (Q5)
	int16_t pk[32], hk[32];
	for (int i = 0; i < 16; i++) {
		pk[i] = l5d_word(i / 4 * bs, qb);
		pk[16 + i] = l5d_word(i / 4 * bs + 2, qb);
		hk[i] = hk[16 + i] = 0;
	}
	for (int j = 0; j < 4; j++) hk[j] = l5d_word(j * bs + ho, qb), hk[4 + j] = l5d_word(j * bs + ho + 2, qb);
	const __m512i pick = _mm512_loadu_si512((const void *)pk), hpick = _mm512_loadu_si512((const void *)hk);
	const __m512i m4 = _mm512_set1_epi8(0x0f), b5 = _mm512_set1_epi8(0x10);
	__m512 acc[4][4];
	for (int j = 0; j < 4; j++)
		for (int i = 0; i < NX; i++) acc[j][i] = _mm512_setzero_ps();
	for (int64_t b = 0; b < nb; b += 4) {
		const l5d_quad *x = xq + b / 4 * NX;
		for (int j = 0; j < 4; j++) {
			const uint8_t *p = rows[j] + b * bs;
			_mm_prefetch((const char *)(p + pf), _MM_HINT_T0);
			_mm_prefetch((const char *)(p + pf + qb - 1), _MM_HINT_T0);
			const __m512i v = l5d_lanes16(p + qo, bs);
			__m512i lo = _mm512_and_si512(v, m4), hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
			const __m512i h0 = _mm512_loadu_si512((const void *)p), h1 = _mm512_loadu_si512((const void *)(p + o2));
			if (is5) {
				const __m128i qh = _mm512_castsi512_si128(_mm512_permutex2var_epi16(h0, hpick, h1));
				lo = _mm512_mask_add_epi8(lo, _cvtu64_mask64((uint64_t)_mm_cvtsi128_si64(qh)), lo, b5);
				hi = _mm512_mask_add_epi8(hi, _cvtu64_mask64((uint64_t)_mm_extract_epi64(qh, 1)), hi, b5);
			}
			const __m512i hv = _mm512_permutex2var_epi16(h0, pick, h1);
			const __m512 dw = _mm512_cvtph_ps(_mm512_castsi512_si256(hv));
			const __m512 mw = is1 ? _mm512_cvtph_ps(_mm512_extracti64x4_epi64(hv, 1)) : _mm512_setzero_ps();
			for (int i = 0; i < NX; i++) {
				const __m512i s = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(x[i].c, lo, x[i].xl), hi, x[i].xh);
				acc[j][i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(dw, x[i].d), acc[j][i]);
				if (is1) acc[j][i] = _mm512_fmadd_ps(mw, x[i].s, acc[j][i]);
			}
		}
	}
	for (int j = 0; j < 4; j++)
		for (int i = 0; i < NX; i++) out[i][j] = _mm512_reduce_add_ps(acc[j][i]);
}

// ---------------------------------------------------------------- the driver

// NX (1..4) activation rows at x (xrb bytes apart) against weight rows r0..r1.
LGA void l5d_chunk(const int T, const int NX, const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb,
                   int64_t nb, int64_t r0, int64_t r1, float *dst, int64_t ldd, void *buf) {
	const int q8 = T == EMBER_Q8_0;
	l5d_pair *xp = (l5d_pair *)buf;
	l5d_quad *xq = (l5d_quad *)buf;
	for (int i = 0; i < NX; i++) {
		if (q8) l5d_prep(x + i * xrb, nb, xp + i, NX);
		else l5d_prep4(T, x + i * xrb, nb, xq + i, NX);
	}
	// The rows of the next group of four lie 4 * wrb further on; short rows (a few KB) are
	// one stream, so a distance of two groups keeps it ahead.
	const int64_t pf = (wrb <= 2560 ? 8 : 4) * wrb;
	for (int64_t r = r0; r < r1; r += 4) {
		const int nr = r1 - r < 4 ? (int)(r1 - r) : 4;
		const uint8_t *rows[4];
		for (int j = 0; j < 4; j++) rows[j] = w + (r + (j < nr ? j : 0)) * wrb;
		float out[4][4];
		if (q8) l5d_rows4(NX, rows, xp, nb, pf, out);
		else l5d_rows4_q(T, NX, rows, xq, nb, pf, out);
		for (int i = 0; i < NX; i++)
			for (int j = 0; j < nr; j++) dst[i * ldd + r + j] = out[i][j];
	}
}

// The activation rows four at a time (each four read the weights once).
LGA int l5d_run(const int T, const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb, int64_t nx, int64_t nb,
                int64_t r0, int64_t r1, float *dst, int64_t ldd) {
	if (nb % (T == EMBER_Q8_0 ? 2 : 4) || nb * (nx < 4 ? nx : 4) > LG_DEC_XB || r1 <= r0) return -1;
	union {
		l5d_pair p[LG_DEC_XB / 2];
		l5d_quad q[LG_DEC_XB / 4];
	} xs;
	for (int64_t i0 = 0; i0 < nx; i0 += 4) {
		const uint8_t *xi = x + i0 * xrb;
		float *di = dst + i0 * ldd;
		switch (nx - i0 < 4 ? nx - i0 : 4) {
		case 1: l5d_chunk(T, 1, w, wrb, xi, xrb, nb, r0, r1, di, ldd, &xs); break;
		case 2: l5d_chunk(T, 2, w, wrb, xi, xrb, nb, r0, r1, di, ldd, &xs); break;
		case 3: l5d_chunk(T, 3, w, wrb, xi, xrb, nb, r0, r1, di, ldd, &xs); break;
		default: l5d_chunk(T, 4, w, wrb, xi, xrb, nb, r0, r1, di, ldd, &xs); break;
		}
	}
	return 0;
}

int l5_dec_q(int wtype, const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb, int64_t nx, int64_t nb,
             int64_t r0, int64_t r1, float *dst, int64_t ldd) {
	switch (wtype) {
	case EMBER_Q4_0: return l5d_run(EMBER_Q4_0, w, wrb, x, xrb, nx, nb, r0, r1, dst, ldd);
	case EMBER_Q4_1: return l5d_run(EMBER_Q4_1, w, wrb, x, xrb, nx, nb, r0, r1, dst, ldd);
	case EMBER_Q5_0: return l5d_run(EMBER_Q5_0, w, wrb, x, xrb, nx, nb, r0, r1, dst, ldd);
	case EMBER_Q5_1: return l5d_run(EMBER_Q5_1, w, wrb, x, xrb, nx, nb, r0, r1, dst, ldd);
	case EMBER_Q8_0: return l5d_run(EMBER_Q8_0, w, wrb, x, xrb, nx, nb, r0, r1, dst, ldd);
	}
	return -1;
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
