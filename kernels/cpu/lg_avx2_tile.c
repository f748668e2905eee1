// lg_avx2_tile.c: the tiled (prefill) gemm of the AVX2 path; lg_avx2.c describes the
// tile layout and dispatches here for larger batches. The quantized types go on to
// lg_rows8.h (a weight row per lane); their tiles stay for timing (LR8_MIN_NX).
//
// Stack use: a weight tile of LG_RB x LG_KCB blocks (54 KB) and an activation tile (10 KB)
// for the quantized types; 16 KB of converted activations for the float types.
#include "lg.h"

#if defined(__x86_64__)
#include <immintrin.h> // before the target pragma: its functions carry their own targets
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC target("avx2,fma,f16c")
#endif
#include "lg_x86.h"

// ================================================================ gemm: tiled (prefill)

#define LG_G 8        // blocks per interleaved group
#ifndef LG_RB
#define LG_RB 24      // weight rows per tile
#endif
#ifndef LG_KCB
#define LG_KCB 64     // blocks of k per tile (a multiple of LG_G)
#endif
#define LG_TX 4       // activation rows per micro-kernel
#define LG_TR 2       // weight rows per micro-kernel

typedef struct {
	int8_t q[LG_RB][LG_KCB * LG_QK];
	uint16_t d[LG_RB][LG_KCB]; // f16 scales, converted in the micro-kernel
	uint16_t m[LG_RB][LG_KCB];
} lga_wtile;

typedef struct {
	int8_t q[LG_TX][LG_KCB * LG_QK];
	uint16_t d[LG_TX][LG_KCB]; // f16
	uint16_t s[LG_TX][LG_KCB]; // f16 (Q8_1 s)  // Q8_1 s
	int32_t c[LG_TX][LG_KCB]; // -offset * sum(q) per block
} lga_xtile;

// Unpack nb blocks (from block b0) of one weight row into the tile row, zero-padded to a
// whole number of groups.
LGA void lga_unpack_w(const int T, const uint8_t *row, int64_t b0, int nb, int8_t *q, uint16_t *d, uint16_t *m) {
	const int bs = lg_type_bytes(T);
	const int ng = (nb + LG_G - 1) / LG_G;
	for (int g = 0; g < ng; g++) {
		__m256i v[8];
		for (int l = 0; l < LG_G; l++) {
			const int b = g * LG_G + l;
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
		lga_store_group(q + g * LG_G * LG_QK, v);
	}
}

// Repack nb blocks (from b0) of one activation row (Q8_0 or Q8_1) into the tile.
LGA void lga_pack_x(const int is1, const int off, const uint8_t *row, int64_t b0, int nb, int8_t *q,
                    uint16_t *d, uint16_t *s, int32_t *c) {
	const int bs = is1 ? 36 : 34, qo = is1 ? 4 : 2;
	const int ng = (nb + LG_G - 1) / LG_G;
	for (int g = 0; g < ng; g++) {
		__m256i v[8];
		for (int l = 0; l < LG_G; l++) {
			const int b = g * LG_G + l;
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
		int8_t *o = q + g * LG_G * LG_QK;
		lga_store_group(o, v);
		if (off) {
			__m256i sum = _mm256_setzero_si256();
			for (int e = 0; e < 8; e++)
				sum = _mm256_add_epi32(sum, lga_dot_u(_mm256_set1_epi8(1), _mm256_loadu_si256((const __m256i *)(o + 32 * e))));
			sum = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_mullo_epi32(sum, _mm256_set1_epi32(off)));
			_mm256_storeu_si256((__m256i *)(c + g * LG_G), sum);
		}
	}
}

// The micro-kernel: NX activation rows x NR weight rows over ng groups of the tiles.
// Q8_0: per 32-byte step, maddubs(|x|, sign(w, x)) widened by madd into int32 lane sums,
// scaled once per group. 4/5-bit weights (unsigned): maddubs(w, x) summed in int16 over
// acc16 steps (8 for 4-bit, 4 for 5-bit: the most that cannot overflow), then widened,
// corrected and scaled. LG_OPAQUE keeps each accumulator a chain in one register (GCC
// otherwise reassociates the unrolled sums into trees that spill).
LGA void lga_micro(const int T, const int NX, const int NR, const lga_wtile *wt, int wr,
                   const lga_xtile *xt, int ng, float out[LG_TX][LG_TR]) {
	const int is1 = lga_is1(T), off = lga_offset(T);
	const int acc16 = (T == EMBER_Q4_0 || T == EMBER_Q4_1) ? 8 : 4;
	const __m256i ones = _mm256_set1_epi16(1);
	__m256 fa[LG_TX][LG_TR];
	for (int i = 0; i < NX; i++)
		for (int r = 0; r < NR; r++) fa[i][r] = _mm256_setzero_ps();
	for (int g = 0; g < ng; g++) {
		const int8_t *wq[LG_TR], *xq[LG_TX];
		for (int r = 0; r < NR; r++) wq[r] = wt->q[wr + r] + g * 256;
		for (int i = 0; i < NX; i++) xq[i] = xt->q[i] + g * 256;
		if (T == EMBER_Q8_0) {
			__m256i ia[LG_TX][LG_TR];
			for (int i = 0; i < NX; i++)
				for (int r = 0; r < NR; r++) ia[i][r] = _mm256_setzero_si256();
			for (int e = 0; e < 8; e++) {
				__m256i aw[LG_TR];
				for (int r = 0; r < NR; r++) aw[r] = _mm256_abs_epi8(_mm256_loadu_si256((const __m256i *)(wq[r] + e * 32)));
				for (int i = 0; i < NX; i++) {
					const __m256i xv = _mm256_loadu_si256((const __m256i *)(xq[i] + e * 32));
					for (int r = 0; r < NR; r++) {
						const __m256i sx = _mm256_sign_epi8(xv, _mm256_loadu_si256((const __m256i *)(wq[r] + e * 32)));
						const __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(aw[r], sx), ones);
						ia[i][r] = _mm256_add_epi32(ia[i][r], p);
						LG_OPAQUE(ia[i][r]);
					}
				}
			}
			for (int r = 0; r < NR; r++) {
				const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(wt->d[wr + r] + g * LG_G)));
				for (int i = 0; i < NX; i++) {
					const __m256 dd = _mm256_mul_ps(dw, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(xt->d[i] + g * LG_G))));
					fa[i][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(ia[i][r]), dd, fa[i][r]);
				}
			}
			continue;
		}
		for (int e0 = 0; e0 < 8; e0 += acc16) {
			__m256i ps[LG_TX][LG_TR];
			for (int e = e0; e < e0 + acc16; e++) {
				__m256i wv[LG_TR];
				for (int r = 0; r < NR; r++) wv[r] = _mm256_loadu_si256((const __m256i *)(wq[r] + e * 32));
				for (int i = 0; i < NX; i++) {
					const __m256i xv = _mm256_loadu_si256((const __m256i *)(xq[i] + e * 32));
					for (int r = 0; r < NR; r++) {
						const __m256i p = _mm256_maddubs_epi16(wv[r], xv);
						ps[i][r] = e == e0 ? p : _mm256_add_epi16(ps[i][r], p);
						LG_OPAQUE(ps[i][r]);
					}
				}
			}
			for (int r = 0; r < NR; r++) {
				const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(wt->d[wr + r] + g * LG_G)));
				for (int i = 0; i < NX; i++) {
					__m256i s = _mm256_madd_epi16(ps[i][r], ones);
					if (off && e0 == 0) s = _mm256_add_epi32(s, _mm256_loadu_si256((const __m256i *)(xt->c[i] + g * LG_G)));
					const __m256 dd = _mm256_mul_ps(dw, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(xt->d[i] + g * LG_G))));
					fa[i][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), dd, fa[i][r]);
					if (is1 && e0 == 0)
						fa[i][r] = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(wt->m[wr + r] + g * LG_G))), _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(xt->s[i] + g * LG_G))), fa[i][r]);
				}
			}
		}
	}
	if (NX * NR < 4) {
		for (int i = 0; i < NX; i++)
			for (int r = 0; r < NR; r++) out[i][r] = lga_hsum(fa[i][r]);
		return;
	}
	__m256 h[8];
	LG_UNROLL
	for (int j = 0; j < 8; j++) h[j] = (j / 2 < NX && j % 2 < NR) ? fa[j / 2][j % 2] : _mm256_setzero_ps();
	_mm256_storeu_ps(&out[0][0], lga_hsum8(h));
}

#define LGA_MICRO_FN(T, SUF)                                                                               \
	static void lga_micro_##SUF(int nxx, int nr, const lga_wtile *wt, int wr, const lga_xtile *xt, int ng, \
	                            float out[LG_TX][LG_TR]) {                                                 \
		switch (nr * 8 + nxx) {                                                                             \
		case 8 + 1: lga_micro(T, 1, 1, wt, wr, xt, ng, out); break;                                         \
		case 8 + 2: lga_micro(T, 2, 1, wt, wr, xt, ng, out); break;                                         \
		case 8 + 3: lga_micro(T, 3, 1, wt, wr, xt, ng, out); break;                                         \
		case 8 + 4: lga_micro(T, 4, 1, wt, wr, xt, ng, out); break;                                         \
		case 16 + 1: lga_micro(T, 1, 2, wt, wr, xt, ng, out); break;                                        \
		case 16 + 2: lga_micro(T, 2, 2, wt, wr, xt, ng, out); break;                                        \
		case 16 + 3: lga_micro(T, 3, 2, wt, wr, xt, ng, out); break;                                        \
		default: lga_micro(T, 4, 2, wt, wr, xt, ng, out); break;                                            \
		}                                                                                                   \
	}                                                                                                       \
	static void lga_unpack_##SUF(const uint8_t *row, int64_t b0, int nb, int8_t *q, uint16_t *d, uint16_t *m) {   \
		lga_unpack_w(T, row, b0, nb, q, d, m);                                                              \
	}

LGA_MICRO_FN(EMBER_Q4_0, q4_0)
LGA_MICRO_FN(EMBER_Q4_1, q4_1)
LGA_MICRO_FN(EMBER_Q5_0, q5_0)
LGA_MICRO_FN(EMBER_Q5_1, q5_1)
LGA_MICRO_FN(EMBER_Q8_0, q8_0)

#include "lg_rows8.h"
// LR8_MIN_NX: the batch from which lg_rows8.h's kernel takes over from the tiles (all of
// the batches lg_gemm_avx2 sends here; larger only to time the tiles).
#ifndef LR8_MIN_NX
#define LR8_MIN_NX 0
#endif

typedef void (*lga_micro_fn)(int, int, const lga_wtile *, int, const lga_xtile *, int, float[LG_TX][LG_TR]);
typedef void (*lga_unpack_fn)(const uint8_t *, int64_t, int, int8_t *, uint16_t *, uint16_t *);

void lg_tiled_q_avx2(int T, const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb, int64_t nx,
                        int64_t k, int64_t r0, int64_t r1, float *dst, int64_t ldd) {
	if (nx >= LR8_MIN_NX) {
		switch (T) {
		case EMBER_Q4_0: lr8_gemm_q4_0(w, wrb, x, xrb, nx, k / LG_QK, r0, r1, dst, ldd); return;
		case EMBER_Q4_1: lr8_gemm_q4_1(w, wrb, x, xrb, nx, k / LG_QK, r0, r1, dst, ldd); return;
		case EMBER_Q5_0: lr8_gemm_q5_0(w, wrb, x, xrb, nx, k / LG_QK, r0, r1, dst, ldd); return;
		case EMBER_Q5_1: lr8_gemm_q5_1(w, wrb, x, xrb, nx, k / LG_QK, r0, r1, dst, ldd); return;
		default: lr8_gemm_q8_0(w, wrb, x, xrb, nx, k / LG_QK, r0, r1, dst, ldd); return;
		}
	}
	lga_micro_fn micro;
	lga_unpack_fn unpack;
	switch (T) {
	case EMBER_Q4_0: micro = lga_micro_q4_0, unpack = lga_unpack_q4_0; break;
	case EMBER_Q4_1: micro = lga_micro_q4_1, unpack = lga_unpack_q4_1; break;
	case EMBER_Q5_0: micro = lga_micro_q5_0, unpack = lga_unpack_q5_0; break;
	case EMBER_Q5_1: micro = lga_micro_q5_1, unpack = lga_unpack_q5_1; break;
	default: micro = lga_micro_q8_0, unpack = lga_unpack_q8_0; break;
	}
	const int is1 = lga_is1(T), off = lga_offset(T);
	const int64_t nbk = k / LG_QK;
	lga_wtile wt __attribute__((aligned(64)));
	lga_xtile xt __attribute__((aligned(64)));
	for (int64_t rb = r0; rb < r1; rb += LG_RB) {
		const int nrb = (int)(r1 - rb < LG_RB ? r1 - rb : LG_RB);
		for (int64_t kb = 0; kb < nbk; kb += LG_KCB) {
			const int nb = (int)(nbk - kb < LG_KCB ? nbk - kb : LG_KCB);
			const int ng = (nb + LG_G - 1) / LG_G;
			for (int r = 0; r < nrb; r++) unpack(w + (rb + r) * wrb, kb, nb, wt.q[r], wt.d[r], wt.m[r]);
			for (int64_t i0 = 0; i0 < nx; i0 += LG_TX) {
				const int nxx = (int)(nx - i0 < LG_TX ? nx - i0 : LG_TX);
				for (int i = 0; i < nxx; i++) {
					const uint8_t *row = x + (i0 + i) * xrb;
					if (is1) lga_pack_x(1, 0, row, kb, nb, xt.q[i], xt.d[i], xt.s[i], xt.c[i]);
					else if (off == 8) lga_pack_x(0, 8, row, kb, nb, xt.q[i], xt.d[i], xt.s[i], xt.c[i]);
					else if (off == 16) lga_pack_x(0, 16, row, kb, nb, xt.q[i], xt.d[i], xt.s[i], xt.c[i]);
					else lga_pack_x(0, 0, row, kb, nb, xt.q[i], xt.d[i], xt.s[i], xt.c[i]);
				}
				for (int r = 0; r < nrb; r += LG_TR) {
					const int nr = nrb - r < LG_TR ? nrb - r : LG_TR;
					float out[LG_TX][LG_TR];
					micro(nxx, nr, &wt, r, &xt, ng, out);
					for (int i = 0; i < nxx; i++)
						for (int rr = 0; rr < nr; rr++) {
							float *p = dst + (i0 + i) * ldd + rb + r + rr;
							*p = kb == 0 ? out[i][rr] : *p + out[i][rr];
						}
				}
			}
		}
	}
}

// Float weights: activation rows converted to f32 per chunk, weights converted on the fly;
// micro-kernels of up to LG_TX activation rows by LG_FTR weight rows (12 accumulators and
// four operands: the 16 ymm registers).
#define LG_FKC 1024 // elements of k per chunk
#define LG_FTR 3    // weight rows per micro-kernel
#define LG_FRB 15   // weight rows per chunk (LG_FTR's multiple): 30 KB of halves in L1

LGA void lga_fmicro(const int T, const int NX, const int NR, const uint8_t *w, int64_t wrb, const float *xf,
                    int64_t xs, int64_t j0, int n, float out[LG_TX][LG_FTR]) {
	__m256 acc[LG_TX][LG_FTR];
	for (int i = 0; i < NX; i++)
		for (int r = 0; r < NR; r++) acc[i][r] = _mm256_setzero_ps();
	int j = 0;
	for (; j + 8 <= n; j += 8) {
		__m256 wv[LG_FTR];
		for (int r = 0; r < NR; r++) wv[r] = lga_fload(T, w + r * wrb, j0 + j);
		for (int i = 0; i < NX; i++) {
			const __m256 xv = _mm256_loadu_ps(xf + i * xs + j);
			for (int r = 0; r < NR; r++) acc[i][r] = _mm256_fmadd_ps(wv[r], xv, acc[i][r]);
		}
	}
	for (int i = 0; i < NX; i++)
		for (int r = 0; r < NR; r++) {
			float s = lga_hsum(acc[i][r]);
			for (int jj = j; jj < n; jj++) s += lga_fscalar(T, w + r * wrb, j0 + jj) * xf[i * xs + jj];
			out[i][r] = s;
		}
}

#define LGA_FMICRO_FN(T, SUF)                                                                          \
	static void lga_fmicro_##SUF(int nxx, int nr, const uint8_t *w, int64_t wrb, const float *xf,       \
	                             int64_t xs, int64_t j0, int n, float out[LG_TX][LG_FTR]) {             \
		switch (nr * 8 + nxx) {                                                                         \
		case 8 + 1: lga_fmicro(T, 1, 1, w, wrb, xf, xs, j0, n, out); break;                             \
		case 8 + 2: lga_fmicro(T, 2, 1, w, wrb, xf, xs, j0, n, out); break;                             \
		case 8 + 3: lga_fmicro(T, 3, 1, w, wrb, xf, xs, j0, n, out); break;                             \
		case 8 + 4: lga_fmicro(T, 4, 1, w, wrb, xf, xs, j0, n, out); break;                             \
		case 16 + 1: lga_fmicro(T, 1, 2, w, wrb, xf, xs, j0, n, out); break;                            \
		case 16 + 2: lga_fmicro(T, 2, 2, w, wrb, xf, xs, j0, n, out); break;                            \
		case 16 + 3: lga_fmicro(T, 3, 2, w, wrb, xf, xs, j0, n, out); break;                            \
		case 16 + 4: lga_fmicro(T, 4, 2, w, wrb, xf, xs, j0, n, out); break;                            \
		case 24 + 1: lga_fmicro(T, 1, 3, w, wrb, xf, xs, j0, n, out); break;                            \
		case 24 + 2: lga_fmicro(T, 2, 3, w, wrb, xf, xs, j0, n, out); break;                            \
		case 24 + 3: lga_fmicro(T, 3, 3, w, wrb, xf, xs, j0, n, out); break;                            \
		default: lga_fmicro(T, 4, 3, w, wrb, xf, xs, j0, n, out); break;                                \
		}                                                                                               \
	}

LGA_FMICRO_FN(EMBER_F16, f16)
LGA_FMICRO_FN(EMBER_BF16, bf16)
LGA_FMICRO_FN(EMBER_F32, f32)

void lg_tiled_f_avx2(int T, const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb, int64_t nx,
                        int64_t k, int64_t r0, int64_t r1, float *dst, int64_t ldd) {
	float xf[LG_TX][LG_FKC] __attribute__((aligned(32)));
	const int es = T == EMBER_F32 ? 4 : 2;
	for (int64_t rb = r0; rb < r1; rb += LG_FRB) {
		const int nrb = (int)(r1 - rb < LG_FRB ? r1 - rb : LG_FRB);
		// 16 weight rows of a chunk stay in L1: 32 KB of halves, 32 KB of floats
		const int kc = T == EMBER_F32 ? LG_FKC / 2 : LG_FKC;
		for (int64_t j0 = 0; j0 < k; j0 += kc) {
			const int n = (int)(k - j0 < kc ? k - j0 : kc);
			for (int64_t i0 = 0; i0 < nx; i0 += LG_TX) {
				const int nxx = (int)(nx - i0 < LG_TX ? nx - i0 : LG_TX);
				const float *xp;
				int64_t xs;
				if (T == EMBER_F32 && xrb % 4 == 0) {
					xp = (const float *)(const void *)(x + i0 * xrb + 4 * j0);
					xs = xrb / 4;
				} else {
					for (int i = 0; i < nxx; i++) lg_dequantize_avx2(T, x + (i0 + i) * xrb + es * j0, xf[i], n);
					xp = xf[0];
					xs = LG_FKC;
				}
				for (int r = 0; r < nrb; r += LG_FTR) {
					const int nr = nrb - r < LG_FTR ? nrb - r : LG_FTR;
					float out[LG_TX][LG_FTR];
					const uint8_t *wp = w + (rb + r) * wrb;
					if (T == EMBER_F16) lga_fmicro_f16(nxx, nr, wp, wrb, xp, xs, j0, n, out);
					else if (T == EMBER_BF16) lga_fmicro_bf16(nxx, nr, wp, wrb, xp, xs, j0, n, out);
					else lga_fmicro_f32(nxx, nr, wp, wrb, xp, xs, j0, n, out);
					for (int i = 0; i < nxx; i++)
						for (int rr = 0; rr < nr; rr++) {
							float *p = dst + (i0 + i) * ldd + rb + r + rr;
							*p = j0 == 0 ? out[i][rr] : *p + out[i][rr];
						}
				}
			}
		}
	}
}


#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
