// lg_avx512.c: AVX-512 paths of the legacy-quant kernels (EMBER_ISA_AVX512 and
// EMBER_ISA_AVX512VNNI). Quantize, dequantize and the float types' decode are memory-bound
// and use the AVX2 code; a few activation rows of the quantized types go, with VNNI, to
// the kernels that hold several blocks of one weight row per register (lg_avx512_dec.c),
// else to those with four weight rows per register (l5_quad, lg_avx512_quad.c), and the
// prefill gemm of the quantized types to lg_vnni16.h (VNNI: a weight row per lane) or,
// without VNNI, to 512-bit tiles and micro-kernels.
//
// The tiles (AVX-512 without VNNI) interleave groups of 16 blocks: 64-byte vector e (0..7)
// of a group holds, in dword lane l (0..15), elements 4e..4e+3 of block l, and every tile
// of weight rows packs its activation rows the same way. Products: vpmaddubsw + vpmaddwd
// (Q8_0 negates x under a mask of the negative weights, for want of vpsignb).
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
// groups.
LGA void l5_unpack_w(const int T, const uint8_t *row, int64_t b0, int nb, uint8_t *q, uint16_t *d, uint16_t *m) {
	const int bs = lg_type_bytes(T);
	const int ng = (nb + L5_G - 1) / L5_G;
	for (int g = 0; g < ng; g++) {
		__m256i v[16];
		for (int l = 0; l < L5_G; l++) {
			const int b = g * L5_G + l;
			if (b < nb) {
				const uint8_t *blk = row + (b0 + b) * bs;
				v[l] = lga_wquants(T, blk);
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
LGA void l5_pack_x(const int is1, const int off, const uint8_t *row, int64_t b0, int nb,
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
				sum = _mm512_add_epi32(sum, _mm512_madd_epi16(_mm512_maddubs_epi16(one8, xe), _mm512_set1_epi16(1)));
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
LGA void l5_panel(const int T, const int NX, const l5_wtile *wt, int nrb, const l5_xtile *xt, int ng,
                  float *dst, int64_t ldd, int first) {
	for (int r = 0; r < nrb; r += L5_TR) {
		float out[L5_TX][L5_TR];
		const int nr = nrb - r < L5_TR ? nrb - r : L5_TR;
		if (nr == 2) l5_micro_bw(T, NX, 2, wt, r, xt, ng, out);
		else l5_micro_bw(T, NX, 1, wt, r, xt, ng, out);
		for (int i = 0; i < NX; i++)
			for (int rr = 0; rr < nr; rr++) {
				float *p = dst + i * ldd + r + rr;
				*p = first ? out[i][rr] : *p + out[i][rr];
			}
	}
}

#define L5_TYPE_FNS(T, SUF)                                                                                      \
	static void l5_panel_##SUF(int nxx, const l5_wtile *wt, int nrb, const l5_xtile *xt, int ng, float *dst,    \
	                           int64_t ldd, int first) {                                                        \
		switch (nxx) {                                                                                           \
		case 1: l5_panel(T, 1, wt, nrb, xt, ng, dst, ldd, first); break;                                         \
		case 2: l5_panel(T, 2, wt, nrb, xt, ng, dst, ldd, first); break;                                         \
		case 3: l5_panel(T, 3, wt, nrb, xt, ng, dst, ldd, first); break;                                         \
		default: l5_panel(T, 4, wt, nrb, xt, ng, dst, ldd, first); break;                                        \
		}                                                                                                        \
	}                                                                                                            \
	static void l5_unpack_##SUF(const uint8_t *row, int64_t b0, int nb, uint8_t *q, uint16_t *d, uint16_t *m) {  \
		l5_unpack_w(T, row, b0, nb, q, d, m);                                                                    \
	}

L5_TYPE_FNS(EMBER_Q4_0, q4_0)
L5_TYPE_FNS(EMBER_Q4_1, q4_1)
L5_TYPE_FNS(EMBER_Q5_0, q5_0)
L5_TYPE_FNS(EMBER_Q5_1, q5_1)
L5_TYPE_FNS(EMBER_Q8_0, q8_0)

#include "lg_vnni16.h"
// L16_MIN_NX: the batch from which VNNI takes lg_vnni16.h's kernel over the quad kernels
// (BenchmarkLGGemmSmallBatch on the EPYC VM: at 16 rows 15-20% ahead, at 12 and 8 ~10% behind).
#ifndef L16_MIN_NX
#define L16_MIN_NX 16
#endif

typedef void (*l5_panel_fn)(int, const l5_wtile *, int, const l5_xtile *, int, float *, int64_t, int);
typedef void (*l5_unpack_fn)(const uint8_t *, int64_t, int, uint8_t *, uint16_t *, uint16_t *);

static void l5_pack_x_any(int is1, int off, const uint8_t *row, int64_t b0, int nb, l5_xtile *xt, int i) {
	if (is1) l5_pack_x(1, 0, row, b0, nb, xt->q[i], xt->d[i], xt->s[i], xt->c[i]);
	else if (off == 8) l5_pack_x(0, 8, row, b0, nb, xt->q[i], xt->d[i], xt->s[i], xt->c[i]);
	else if (off == 16) l5_pack_x(0, 16, row, b0, nb, xt->q[i], xt->d[i], xt->s[i], xt->c[i]);
	else l5_pack_x(0, 0, row, b0, nb, xt->q[i], xt->d[i], xt->s[i], xt->c[i]);
}

static void l5_tiled_q(int T, const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb, int64_t nx,
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
	const int off = lga_offset(T);
	const int64_t nbk = k / LG_QK;
	l5_wtile wt __attribute__((aligned(64)));
	l5_xtile xt __attribute__((aligned(64)));
	for (int64_t rb = r0; rb < r1; rb += L5_RB) {
		const int nrb = (int)(r1 - rb < L5_RB ? r1 - rb : L5_RB);
		for (int64_t kb = 0; kb < nbk; kb += L5_KCB) {
			const int nb = (int)(nbk - kb < L5_KCB ? nbk - kb : L5_KCB);
			const int ng = (nb + L5_G - 1) / L5_G;
			for (int r = 0; r < nrb; r++) unpack(w + (rb + r) * wrb, kb, nb, wt.q[r], wt.d[r], wt.m[r]);
			for (int64_t i0 = 0; i0 < nx; i0 += L5_TX) {
				const int nxx = (int)(nx - i0 < L5_TX ? nx - i0 : L5_TX);
				for (int i = 0; i < nxx; i++) l5_pack_x_any(is1, off, x + (i0 + i) * xrb, kb, nb, &xt, i);
				panel(nxx, &wt, nrb, &xt, ng, dst + i0 * ldd + rb, ldd, kb == 0);
			}
		}
	}
}

// ================================================================ decode (few activation rows)

// Four weight rows per 512-bit register for the 4- and 5-bit types: the 16 quant bytes of
// row j fill 128-bit lane j, so one AND gives the low nibbles (elements 0..15) of all four
// rows and a shift and AND the high ones; the activations are broadcast to every lane.
// Lanes 4j..4j+3 of the sums belong to row j.


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
		if (vnni && nx >= L16_MIN_NX) {
			l16_gemm_any(wtype, w, wrb, xq, xrb, nx, k / LG_QK, r0, r1, dst, ldd);
			return 0;
		}
		if (!vnni && nx >= (wtype == EMBER_Q8_0 ? 6 : 20)) {
			l5_tiled_q(wtype, w, wrb, xq, xrb, nx, k, r0, r1, dst, ldd);
			return 0;
		}
		// fewer rows with VNNI: lg_avx512_dec.c, where the block count suits it
		if (vnni && l5_dec_q(wtype, w, wrb, xq, xrb, nx, k / LG_QK, r0, r1, dst, ldd) == 0) return 0;
		switch (wtype) {
		case EMBER_Q4_0: l5_quad_q4_0(vnni, w, wrb, xq, xrb, nx, k / LG_QK, r0, r1, dst, ldd); return 0;
		case EMBER_Q4_1: l5_quad_q4_1(vnni, w, wrb, xq, xrb, nx, k / LG_QK, r0, r1, dst, ldd); return 0;
		case EMBER_Q5_0: l5_quad_q5_0(vnni, w, wrb, xq, xrb, nx, k / LG_QK, r0, r1, dst, ldd); return 0;
		case EMBER_Q5_1: l5_quad_q5_1(vnni, w, wrb, xq, xrb, nx, k / LG_QK, r0, r1, dst, ldd); return 0;
		}
		// Q8_0 with few activation rows: from two, with VNNI, the quad kernel (1.5-2x the
		// direct code's speed here); one row that lg_avx512_dec.c left (an odd number of
		// blocks, k > 16384) or no VNNI: the AVX2 direct code.
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
