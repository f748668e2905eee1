// lg_avx512.c: AVX-512 paths of the legacy-quant kernels (EMBER_ISA_AVX512 and
// EMBER_ISA_AVX512VNNI). Quantize, dequantize, the float types and Q8_0 decode are
// memory-bound and use the AVX2 code; the 4/5-bit types get a decode kernel with four
// weight rows per register (l5_quad), and the prefill gemm of the quantized types 512-bit
// tiles and micro-kernels.
//
// The tiles follow lg_avx2.c with groups of 16 blocks: 64-byte vector e (0..7) of a group
// holds, in dword lane l (0..15), elements 4e..4e+3 of block l.
//  - VNNI: every weight type is made unsigned (Q8_0 by adding 128, Q4_0/Q5_0 by keeping
//    the raw 4/5-bit quants) so one vpdpbusd per 64 bytes accumulates u8 x s8 products
//    into the 16 per-block int32 lanes; the offset comes out through an integer start value
//    of -offset * sum(x) per block, computed once when the activations are packed.
//  - AVX512BW without VNNI: vpmaddubsw + vpmaddwd, as AVX2 (Q8_0 negates x under a mask
//    of the negative weights instead of vpsignb, which AVX-512 lacks).
// Stack use of the tiled gemm: 54 KB of weight tile and 10 KB of activation tile (the
// kernels may not allocate; cgo runs C on the thread's system stack).
//
// Everything here also compiles without AVX-512 support in the compiler's defaults (the
// target pragma below), and runs only where cpuid reported AVX-512 F/BW/VL (+VNNI).
#include "lg.h"

#if defined(__x86_64__)
#include <immintrin.h> // before the target pragma: its functions carry their own targets
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni"))), apply_to = function)
#else
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")
#endif
#include "lg_x86.h"

#define L5_G 16   // blocks per interleaved group
#ifndef L5_RB
#define L5_RB 24  // weight rows per tile
#endif
#ifndef L5_KCB
#define L5_KCB 64 // blocks of k per tile (a multiple of L5_G)
#endif
#define L5_TX 4   // activation rows per micro-kernel
#define L5_TR 2   // weight rows per micro-kernel

typedef struct {
	uint8_t q[L5_RB][L5_KCB * LG_QK];
	uint16_t d[L5_RB][L5_KCB]; // f16 scales, converted in the micro-kernel
	uint16_t m[L5_RB][L5_KCB];
} l5_wtile;

typedef struct {
	int8_t q[L5_TX][L5_KCB * LG_QK];
	uint16_t d[L5_TX][L5_KCB]; // f16
	uint16_t s[L5_TX][L5_KCB]; // f16 (Q8_1 s)
	int32_t c[L5_TX][L5_KCB];
} l5_xtile;

// 16 f16 values at p (32-byte aligned) as floats.
LGA __m512 l5_h16(const uint16_t *p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p)); }

// Store 16 blocks (v[l] = 32 bytes of block l) in the interleaved group layout at o.
LGA void l5_store_group(uint8_t *o, const __m256i v[16]) {
	__m256i lo[8], hi[8];
	lga_transpose8(v, lo);
	lga_transpose8(v + 8, hi);
	for (int e = 0; e < 8; e++)
		_mm512_storeu_si512((void *)(o + 64 * e), _mm512_inserti64x4(_mm512_castsi256_si512(lo[e]), hi[e], 1));
}

// Unpack nb blocks (from b0) of one weight row into the tile row, zero-padded to whole
// groups. With vnni, Q8_0 quants are stored plus 128 (unsigned).
LGA void l5_unpack_w(const int T, const int vnni, const uint8_t *row, int64_t b0, int nb, uint8_t *q, uint16_t *d, uint16_t *m) {
	const int bs = lg_type_bytes(T);
	const int ng = (nb + L5_G - 1) / L5_G;
	const __m256i flip = _mm256_set1_epi8((char)0x80);
	for (int g = 0; g < ng; g++) {
		__m256i v[16];
		for (int l = 0; l < L5_G; l++) {
			const int b = g * L5_G + l;
			if (b < nb) {
				const uint8_t *blk = row + (b0 + b) * bs;
				v[l] = lga_wquants(T, blk);
				if (vnni && T == EMBER_Q8_0) v[l] = _mm256_xor_si256(v[l], flip);
				d[b] = lg_rd16(blk);
				if (lga_is1(T)) m[b] = lg_rd16(blk + 2);
			} else {
				v[l] = _mm256_setzero_si256();
				d[b] = 0;
				m[b] = 0;
			}
		}
		l5_store_group(q + g * L5_G * LG_QK, v);
	}
}

// Pack nb blocks (from b0) of one activation row (Q8_0 or Q8_1) into the tile, with the
// start values c = -off * sum(x) per block when off != 0.
LGA void l5_pack_x(const int is1, const int off, const int vnni, const uint8_t *row, int64_t b0, int nb,
                   int8_t *q, uint16_t *d, uint16_t *s, int32_t *c) {
	const int bs = is1 ? 36 : 34, qo = is1 ? 4 : 2;
	const int ng = (nb + L5_G - 1) / L5_G;
	for (int g = 0; g < ng; g++) {
		__m256i v[16];
		for (int l = 0; l < L5_G; l++) {
			const int b = g * L5_G + l;
			if (b < nb) {
				const uint8_t *blk = row + (b0 + b) * bs;
				v[l] = _mm256_loadu_si256((const __m256i *)(blk + qo));
				d[b] = lg_rd16(blk);
				if (is1) s[b] = lg_rd16(blk + 2);
			} else {
				v[l] = _mm256_setzero_si256();
				d[b] = 0;
				s[b] = 0;
			}
		}
		uint8_t *o = (uint8_t *)q + g * L5_G * LG_QK;
		l5_store_group(o, v);
		if (off) {
			__m512i sum = _mm512_setzero_si512();
			const __m512i one8 = _mm512_set1_epi8(1);
			for (int e = 0; e < 8; e++) {
				const __m512i xe = _mm512_loadu_si512((const void *)(o + 64 * e));
				if (vnni) sum = _mm512_dpbusd_epi32(sum, one8, xe);
				else sum = _mm512_add_epi32(sum, _mm512_madd_epi16(_mm512_maddubs_epi16(one8, xe), _mm512_set1_epi16(1)));
			}
			_mm512_storeu_si512((void *)(c + g * L5_G), _mm512_mullo_epi32(sum, _mm512_set1_epi32(-off)));
		}
	}
}

// out[i][r] = sum of the lanes of fa[i][r], for a whole 4x2 tile in one shuffle network.
LGA void l5_reduce(const int NX, const int NR, __m512 fa[L5_TX][L5_TR], float out[L5_TX][L5_TR]) {
	if (NX * NR < 4) {
		for (int i = 0; i < NX; i++)
			for (int r = 0; r < NR; r++) out[i][r] = _mm512_reduce_add_ps(fa[i][r]);
		return;
	}
	__m256 h[8];
	LG_UNROLL
	for (int j = 0; j < 8; j++) {
		const int i = j / 2, r = j % 2;
		h[j] = (i < NX && r < NR) ? _mm256_add_ps(_mm512_castps512_ps256(fa[i][r]), _mm512_extractf32x8_ps(fa[i][r], 1))
		                          : _mm256_setzero_ps();
	}
	_mm256_storeu_ps(&out[0][0], lga_hsum8(h));
}

// The VNNI micro-kernel: NX activation rows x NR weight rows over ng groups.
LGA void l5_micro_vnni(const int T, const int NX, const int NR, const l5_wtile *wt, int wr, const l5_xtile *xt,
                       int ng, float out[L5_TX][L5_TR]) {
	const int is1 = lga_is1(T), corr = T != EMBER_Q4_1 && T != EMBER_Q5_1;
	__m512 fa[L5_TX][L5_TR];
	for (int i = 0; i < NX; i++)
		for (int r = 0; r < NR; r++) fa[i][r] = _mm512_setzero_ps();
	for (int g = 0; g < ng; g++) {
		__m512i ia[L5_TX][L5_TR];
		for (int i = 0; i < NX; i++) {
			const __m512i c0 = corr ? _mm512_loadu_si512((const void *)(xt->c[i] + g * L5_G)) : _mm512_setzero_si512();
			for (int r = 0; r < NR; r++) ia[i][r] = c0;
		}
		for (int e = 0; e < 8; e++) {
			__m512i wv[L5_TR];
			for (int r = 0; r < NR; r++) wv[r] = _mm512_loadu_si512((const void *)(wt->q[wr + r] + g * 512 + e * 64));
			for (int i = 0; i < NX; i++) {
				const __m512i xv = _mm512_loadu_si512((const void *)(xt->q[i] + g * 512 + e * 64));
				for (int r = 0; r < NR; r++) {
					ia[i][r] = _mm512_dpbusd_epi32(ia[i][r], wv[r], xv);
				}
			}
		}
		for (int r = 0; r < NR; r++) {
			const __m512 dw = l5_h16(wt->d[wr + r] + g * L5_G);
			for (int i = 0; i < NX; i++) {
				const __m512 dd = _mm512_mul_ps(dw, l5_h16(xt->d[i] + g * L5_G));
				fa[i][r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(ia[i][r]), dd, fa[i][r]);
				if (is1) fa[i][r] = _mm512_fmadd_ps(l5_h16(wt->m[wr + r] + g * L5_G), l5_h16(xt->s[i] + g * L5_G), fa[i][r]);
			}
		}
	}
	l5_reduce(NX, NR, fa, out);
}

// The AVX512BW micro-kernel (no VNNI).
LGA void l5_micro_bw(const int T, const int NX, const int NR, const l5_wtile *wt, int wr, const l5_xtile *xt,
                     int ng, float out[L5_TX][L5_TR]) {
	const int is1 = lga_is1(T), off = lga_offset(T);
	// e-steps per widening: Q8_0 sums int32 over all 8; 4-bit int16 over 8, 5-bit over 4
	const int acc16 = (T == EMBER_Q8_0 || T == EMBER_Q4_0 || T == EMBER_Q4_1) ? 8 : 4;
	const __m512i ones = _mm512_set1_epi16(1);
	__m512 fa[L5_TX][L5_TR];
	for (int i = 0; i < NX; i++)
		for (int r = 0; r < NR; r++) fa[i][r] = _mm512_setzero_ps();
	for (int g = 0; g < ng; g++) {
		for (int e0 = 0; e0 < 8; e0 += acc16) {
			__m512i ps[L5_TX][L5_TR];
			for (int e = e0; e < e0 + acc16; e++) {
				__m512i wv[L5_TR];
				__mmask64 neg[L5_TR];
				for (int r = 0; r < NR; r++) {
					wv[r] = _mm512_loadu_si512((const void *)(wt->q[wr + r] + g * 512 + e * 64));
					if (T == EMBER_Q8_0) {
						neg[r] = _mm512_movepi8_mask(wv[r]);
						wv[r] = _mm512_abs_epi8(wv[r]);
					}
				}
				for (int i = 0; i < NX; i++) {
					const __m512i xv = _mm512_loadu_si512((const void *)(xt->q[i] + g * 512 + e * 64));
					for (int r = 0; r < NR; r++) {
						__m512i p;
						if (T == EMBER_Q8_0) {
							const __m512i sx = _mm512_mask_sub_epi8(xv, neg[r], _mm512_setzero_si512(), xv);
							p = _mm512_madd_epi16(_mm512_maddubs_epi16(wv[r], sx), ones);
							ps[i][r] = e == e0 ? p : _mm512_add_epi32(ps[i][r], p);
						} else {
							p = _mm512_maddubs_epi16(wv[r], xv);
							ps[i][r] = e == e0 ? p : _mm512_add_epi16(ps[i][r], p);
						}
						LG_OPAQUE(ps[i][r]);
					}
				}
			}
			for (int r = 0; r < NR; r++) {
				const __m512 dw = l5_h16(wt->d[wr + r] + g * L5_G);
				for (int i = 0; i < NX; i++) {
					__m512i s = T == EMBER_Q8_0 ? ps[i][r] : _mm512_madd_epi16(ps[i][r], ones);
					if (off && e0 == 0) s = _mm512_add_epi32(s, _mm512_loadu_si512((const void *)(xt->c[i] + g * L5_G)));
					const __m512 dd = _mm512_mul_ps(dw, l5_h16(xt->d[i] + g * L5_G));
					fa[i][r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), dd, fa[i][r]);
					if (is1 && e0 == 0)
						fa[i][r] = _mm512_fmadd_ps(l5_h16(wt->m[wr + r] + g * L5_G), l5_h16(xt->s[i] + g * L5_G), fa[i][r]);
				}
			}
		}
	}
	l5_reduce(NX, NR, fa, out);
}

// One activation group (NX rows) against all nrb rows of the weight tile, pairs of rows
// at a time; dst points at the group's first row and the tile's first column. first:
// the first chunk of k stores, later chunks add.
LGA void l5_panel(const int T, const int vnni, const int NX, const l5_wtile *wt, int nrb, const l5_xtile *xt, int ng,
                  float *dst, int64_t ldd, int first) {
	for (int r = 0; r < nrb; r += L5_TR) {
		float out[L5_TX][L5_TR];
		const int nr = nrb - r < L5_TR ? nrb - r : L5_TR;
		if (nr == 2) {
			if (vnni) l5_micro_vnni(T, NX, 2, wt, r, xt, ng, out);
			else l5_micro_bw(T, NX, 2, wt, r, xt, ng, out);
		} else {
			if (vnni) l5_micro_vnni(T, NX, 1, wt, r, xt, ng, out);
			else l5_micro_bw(T, NX, 1, wt, r, xt, ng, out);
		}
		for (int i = 0; i < NX; i++)
			for (int rr = 0; rr < nr; rr++) {
				float *p = dst + i * ldd + r + rr;
				*p = first ? out[i][rr] : *p + out[i][rr];
			}
	}
}

#define L5_TYPE_FNS(T, SUF)                                                                                      \
	static void l5_panel_##SUF(int vnni, int nxx, const l5_wtile *wt, int nrb, const l5_xtile *xt, int ng,      \
	                           float *dst, int64_t ldd, int first) {                                            \
		switch (nxx * 2 + vnni) {                                                                                \
		case 2: l5_panel(T, 0, 1, wt, nrb, xt, ng, dst, ldd, first); break;                                      \
		case 3: l5_panel(T, 1, 1, wt, nrb, xt, ng, dst, ldd, first); break;                                      \
		case 4: l5_panel(T, 0, 2, wt, nrb, xt, ng, dst, ldd, first); break;                                      \
		case 5: l5_panel(T, 1, 2, wt, nrb, xt, ng, dst, ldd, first); break;                                      \
		case 6: l5_panel(T, 0, 3, wt, nrb, xt, ng, dst, ldd, first); break;                                      \
		case 7: l5_panel(T, 1, 3, wt, nrb, xt, ng, dst, ldd, first); break;                                      \
		case 8: l5_panel(T, 0, 4, wt, nrb, xt, ng, dst, ldd, first); break;                                      \
		default: l5_panel(T, 1, 4, wt, nrb, xt, ng, dst, ldd, first); break;                                     \
		}                                                                                                        \
	}                                                                                                            \
	static void l5_unpack_##SUF(int vnni, const uint8_t *row, int64_t b0, int nb, uint8_t *q, uint16_t *d, uint16_t *m) { \
		if (vnni) l5_unpack_w(T, 1, row, b0, nb, q, d, m);                                                       \
		else l5_unpack_w(T, 0, row, b0, nb, q, d, m);                                                            \
	}

L5_TYPE_FNS(EMBER_Q4_0, q4_0)
L5_TYPE_FNS(EMBER_Q4_1, q4_1)
L5_TYPE_FNS(EMBER_Q5_0, q5_0)
L5_TYPE_FNS(EMBER_Q5_1, q5_1)
L5_TYPE_FNS(EMBER_Q8_0, q8_0)

typedef void (*l5_panel_fn)(int, int, const l5_wtile *, int, const l5_xtile *, int, float *, int64_t, int);
typedef void (*l5_unpack_fn)(int, const uint8_t *, int64_t, int, uint8_t *, uint16_t *, uint16_t *);

static void l5_pack_x_any(int is1, int off, int vnni, const uint8_t *row, int64_t b0, int nb, l5_xtile *xt, int i) {
	if (is1) l5_pack_x(1, 0, 0, row, b0, nb, xt->q[i], xt->d[i], xt->s[i], xt->c[i]);
	else if (off == 8) {
		if (vnni) l5_pack_x(0, 8, 1, row, b0, nb, xt->q[i], xt->d[i], xt->s[i], xt->c[i]);
		else l5_pack_x(0, 8, 0, row, b0, nb, xt->q[i], xt->d[i], xt->s[i], xt->c[i]);
	} else if (off == 16) {
		if (vnni) l5_pack_x(0, 16, 1, row, b0, nb, xt->q[i], xt->d[i], xt->s[i], xt->c[i]);
		else l5_pack_x(0, 16, 0, row, b0, nb, xt->q[i], xt->d[i], xt->s[i], xt->c[i]);
	} else if (off == 128) l5_pack_x(0, 128, 1, row, b0, nb, xt->q[i], xt->d[i], xt->s[i], xt->c[i]);
	else l5_pack_x(0, 0, 0, row, b0, nb, xt->q[i], xt->d[i], xt->s[i], xt->c[i]);
}

static void l5_tiled_q(int vnni, int T, const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb, int64_t nx,
                       int64_t k, int64_t r0, int64_t r1, float *dst, int64_t ldd) {
	l5_panel_fn panel;
	l5_unpack_fn unpack;
	switch (T) {
	case EMBER_Q4_0: panel = l5_panel_q4_0, unpack = l5_unpack_q4_0; break;
	case EMBER_Q4_1: panel = l5_panel_q4_1, unpack = l5_unpack_q4_1; break;
	case EMBER_Q5_0: panel = l5_panel_q5_0, unpack = l5_unpack_q5_0; break;
	case EMBER_Q5_1: panel = l5_panel_q5_1, unpack = l5_unpack_q5_1; break;
	default: panel = l5_panel_q8_0, unpack = l5_unpack_q8_0; break;
	}
	const int is1 = lga_is1(T);
	const int off = T == EMBER_Q8_0 ? (vnni ? 128 : 0) : lga_offset(T);
	const int64_t nbk = k / LG_QK;
	l5_wtile wt __attribute__((aligned(64)));
	l5_xtile xt __attribute__((aligned(64)));
	for (int64_t rb = r0; rb < r1; rb += L5_RB) {
		const int nrb = (int)(r1 - rb < L5_RB ? r1 - rb : L5_RB);
		for (int64_t kb = 0; kb < nbk; kb += L5_KCB) {
			const int nb = (int)(nbk - kb < L5_KCB ? nbk - kb : L5_KCB);
			const int ng = (nb + L5_G - 1) / L5_G;
			for (int r = 0; r < nrb; r++) unpack(vnni, w + (rb + r) * wrb, kb, nb, wt.q[r], wt.d[r], wt.m[r]);
			for (int64_t i0 = 0; i0 < nx; i0 += L5_TX) {
				const int nxx = (int)(nx - i0 < L5_TX ? nx - i0 : L5_TX);
				for (int i = 0; i < nxx; i++) l5_pack_x_any(is1, off, vnni, x + (i0 + i) * xrb, kb, nb, &xt, i);
				panel(vnni, nxx, &wt, nrb, &xt, ng, dst + i0 * ldd + rb, ldd, kb == 0);
			}
		}
	}
}

// ================================================================ decode (few activation rows)

// Four weight rows per 512-bit register for the 4- and 5-bit types: the 16 quant bytes of
// row j fill 128-bit lane j, so one AND gives the low nibbles (elements 0..15) of all four
// rows and a shift and AND the high ones; the activations are broadcast to every lane.
// Lanes 4j..4j+3 of the sums belong to row j.

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
		for (int j = 1; j < 4; j++) {
			l = _mm512_inserti32x4(l, _mm_loadu_si128((const __m128i *)(p[j] + 2)), j);
			h = _mm512_inserti32x4(h, _mm_loadu_si128((const __m128i *)(p[j] + 18)), j);
		}
		const __m512i flip = _mm512_set1_epi8((char)0x80);
		*lo = _mm512_xor_si512(l, flip);
		*hi = _mm512_xor_si512(h, flip);
		return;
	}
	const int qo = T == EMBER_Q4_0 ? 2 : T == EMBER_Q4_1 ? 4 : T == EMBER_Q5_0 ? 6 : 8;
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
	const int wbs = lg_type_bytes(T), is1 = lga_is1(T), xbs = is1 ? 36 : 34, xqo = is1 ? 4 : 2;
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
	static void l5_quad_##SUF(int vnni, const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb, int64_t nx, \
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

// ================================================================ float weights (prefill)

// 4 activation rows x 4 weight rows of FMAs on 16 lanes; activations converted to f32
// per chunk, weights converted on the fly. Tails use masked loads.
#define L5_FKC 1024 // elements of k per chunk (512 for F32)
#define L5_FR 4     // weight rows per micro-kernel

LGA __m512 l5_fload(const int T, const uint8_t *p, int64_t i, __mmask16 m) {
	switch (T) {
	case EMBER_F16: return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p + 2 * i));
	case EMBER_BF16: return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p + 2 * i)), 16));
	default: return _mm512_maskz_loadu_ps(m, p + 4 * i);
	}
}

LGA void l5_fmicro(const int T, const int NX, const int NR, const uint8_t *w, int64_t wrb, const float *xf, int64_t xs,
                   int64_t j0, int n, float *dst, int64_t ldd, int first) {
	__m512 acc[L5_TX][L5_FR];
	for (int i = 0; i < NX; i++)
		for (int r = 0; r < NR; r++) acc[i][r] = _mm512_setzero_ps();
	for (int j = 0; j < n; j += 16) {
		const __mmask16 m = n - j >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - j)) - 1);
		__m512 wv[L5_FR];
		for (int r = 0; r < NR; r++) wv[r] = l5_fload(T, w + r * wrb, j0 + j, m);
		for (int i = 0; i < NX; i++) {
			const __m512 xv = _mm512_maskz_loadu_ps(m, xf + i * xs + j);
			for (int r = 0; r < NR; r++) acc[i][r] = _mm512_fmadd_ps(wv[r], xv, acc[i][r]);
		}
	}
	// fold to 8 lanes, reduce 8 outputs per shuffle network
	__m256 h[16];
	float t[16];
	const int no = NX * NR, n8 = (no + 7) / 8 * 8;
	LG_UNROLL
	for (int o = 0; o < n8; o++)
		h[o] = o < no ? _mm256_add_ps(_mm512_castps512_ps256(acc[o / NR][o % NR]), _mm512_extractf32x8_ps(acc[o / NR][o % NR], 1))
		              : _mm256_setzero_ps();
	for (int o = 0; o < n8; o += 8) _mm256_storeu_ps(t + o, lga_hsum8(h + o));
	for (int i = 0; i < NX; i++)
		for (int r = 0; r < NR; r++) {
			float *p = dst + i * ldd + r;
			*p = first ? t[i * NR + r] : *p + t[i * NR + r];
		}
}

#define L5_FMICRO_FN(T, SUF)                                                                                      \
	static void l5_fmicro_##SUF(int nxx, int nr, const uint8_t *w, int64_t wrb, const float *xf, int64_t xs,       \
	                            int64_t j0, int n, float *dst, int64_t ldd, int first) {                          \
		switch (nr * 8 + nxx) {                                                                                     \
		case 8 + 1: l5_fmicro(T, 1, 1, w, wrb, xf, xs, j0, n, dst, ldd, first); break;                              \
		case 8 + 2: l5_fmicro(T, 2, 1, w, wrb, xf, xs, j0, n, dst, ldd, first); break;                              \
		case 8 + 3: l5_fmicro(T, 3, 1, w, wrb, xf, xs, j0, n, dst, ldd, first); break;                              \
		case 8 + 4: l5_fmicro(T, 4, 1, w, wrb, xf, xs, j0, n, dst, ldd, first); break;                              \
		case 16 + 1: l5_fmicro(T, 1, 2, w, wrb, xf, xs, j0, n, dst, ldd, first); break;                             \
		case 16 + 2: l5_fmicro(T, 2, 2, w, wrb, xf, xs, j0, n, dst, ldd, first); break;                             \
		case 16 + 3: l5_fmicro(T, 3, 2, w, wrb, xf, xs, j0, n, dst, ldd, first); break;                             \
		case 16 + 4: l5_fmicro(T, 4, 2, w, wrb, xf, xs, j0, n, dst, ldd, first); break;                             \
		case 24 + 1: l5_fmicro(T, 1, 3, w, wrb, xf, xs, j0, n, dst, ldd, first); break;                             \
		case 24 + 2: l5_fmicro(T, 2, 3, w, wrb, xf, xs, j0, n, dst, ldd, first); break;                             \
		case 24 + 3: l5_fmicro(T, 3, 3, w, wrb, xf, xs, j0, n, dst, ldd, first); break;                             \
		case 24 + 4: l5_fmicro(T, 4, 3, w, wrb, xf, xs, j0, n, dst, ldd, first); break;                             \
		case 32 + 1: l5_fmicro(T, 1, 4, w, wrb, xf, xs, j0, n, dst, ldd, first); break;                             \
		case 32 + 2: l5_fmicro(T, 2, 4, w, wrb, xf, xs, j0, n, dst, ldd, first); break;                             \
		case 32 + 3: l5_fmicro(T, 3, 4, w, wrb, xf, xs, j0, n, dst, ldd, first); break;                             \
		default: l5_fmicro(T, 4, 4, w, wrb, xf, xs, j0, n, dst, ldd, first); break;                                 \
		}                                                                                                           \
	}

L5_FMICRO_FN(EMBER_F16, f16)
L5_FMICRO_FN(EMBER_BF16, bf16)
L5_FMICRO_FN(EMBER_F32, f32)

static void l5_tiled_f(int T, const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb, int64_t nx, int64_t k,
                       int64_t r0, int64_t r1, float *dst, int64_t ldd) {
	float xf[L5_TX][L5_FKC] __attribute__((aligned(64)));
	const int es = T == EMBER_F32 ? 4 : 2;
	const int kc = T == EMBER_F32 ? L5_FKC / 2 : L5_FKC; // 16 weight rows of a chunk: 32 KB
	void (*micro)(int, int, const uint8_t *, int64_t, const float *, int64_t, int64_t, int, float *, int64_t, int) =
		T == EMBER_F16 ? l5_fmicro_f16 : T == EMBER_BF16 ? l5_fmicro_bf16 : l5_fmicro_f32;
	for (int64_t rb = r0; rb < r1; rb += 16) {
		const int nrb = (int)(r1 - rb < 16 ? r1 - rb : 16);
		for (int64_t j0 = 0; j0 < k; j0 += kc) {
			const int n = (int)(k - j0 < kc ? k - j0 : kc);
			for (int64_t i0 = 0; i0 < nx; i0 += L5_TX) {
				const int nxx = (int)(nx - i0 < L5_TX ? nx - i0 : L5_TX);
				const float *xp = xf[0];
				int64_t xs = L5_FKC;
				if (T == EMBER_F32 && xrb % 4 == 0) {
					xp = (const float *)(const void *)(x + i0 * xrb + 4 * j0);
					xs = xrb / 4;
				} else {
					for (int i = 0; i < nxx; i++) lg_dequantize_avx2(T, x + (i0 + i) * xrb + es * j0, xf[i], n);
				}
				for (int r = 0; r < nrb; r += L5_FR) {
					const int nr = nrb - r < L5_FR ? nrb - r : L5_FR;
					micro(nxx, nr, w + (rb + r) * wrb, wrb, xp, xs, j0, n, dst + i0 * ldd + rb + r, ldd, j0 == 0);
				}
			}
		}
	}
}

int lg_gemm_avx512(int vnni, int wtype, const uint8_t *w, int64_t wrb, const uint8_t *xq, int64_t xrb,
                   int64_t nx, int64_t k, int64_t r0, int64_t r1, float *dst, int64_t ldd) {
	switch (wtype) {
	case EMBER_Q4_0: case EMBER_Q4_1: case EMBER_Q5_0: case EMBER_Q5_1: case EMBER_Q8_0:
		// Below these batch sizes streaming the weights (once per 4 activation rows, per 3
		// for Q8_0 without VNNI) beats unpacking them into tiles (measured on Zen 5; for
		// Q8_0 with VNNI on Zen 4: 8 rows 1.87 ms in quads against 2.77 in tiles).
		if (nx >= (wtype == EMBER_Q8_0 && !vnni ? 6 : 20)) {
			l5_tiled_q(vnni, wtype, w, wrb, xq, xrb, nx, k, r0, r1, dst, ldd);
			return 0;
		}
		switch (wtype) {
		case EMBER_Q4_0: l5_quad_q4_0(vnni, w, wrb, xq, xrb, nx, k / LG_QK, r0, r1, dst, ldd); return 0;
		case EMBER_Q4_1: l5_quad_q4_1(vnni, w, wrb, xq, xrb, nx, k / LG_QK, r0, r1, dst, ldd); return 0;
		case EMBER_Q5_0: l5_quad_q5_0(vnni, w, wrb, xq, xrb, nx, k / LG_QK, r0, r1, dst, ldd); return 0;
		case EMBER_Q5_1: l5_quad_q5_1(vnni, w, wrb, xq, xrb, nx, k / LG_QK, r0, r1, dst, ldd); return 0;
		}
		// Q8_0 with few activation rows: one row is memory-bound in the AVX2 direct code;
		// from two, with VNNI, the quad kernel (1.5-2x the direct code's speed here).
		if (vnni && nx >= 2) {
			l5_quad_q8_0(vnni, w, wrb, xq, xrb, nx, k / LG_QK, r0, r1, dst, ldd);
			return 0;
		}
		break;
	case EMBER_F16: case EMBER_BF16: case EMBER_F32:
		if (nx >= 8) {
			l5_tiled_f(wtype, w, wrb, xq, xrb, nx, k, r0, r1, dst, ldd);
			return 0;
		}
		break;
	}
	return lg_gemm_avx2(wtype, w, wrb, xq, xrb, nx, k, r0, r1, dst, ldd);
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
