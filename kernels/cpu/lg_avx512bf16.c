// lg_avx512bf16.c: BF16 weight rows against BF16 activation rows with AVX512_BF16's
// vdpbf16ps (Zen 4 and later, Cooper Lake, Sapphire Rapids and later): 32 products a
// instruction, added into 16 float lanes, where the AVX-512 path converts 16 values to
// f32 for each FMA. Products of 1-7 activation rows (decode) stream the weights, four
// rows by three activation rows a pass (lgb_direct; they were compute-bound on the
// conversions: 1B BF16 tg128 10.7 tok/s against llama.cpp's 13.9 on a 2-core Zen VM,
// README); more rows (prompts) take tiles (lgb_tiled), which lost on decode (1B tg64
// 7.9-8.5 against 9.2-9.7, alternating). Products are exact (8-bit by 8-bit
// mantissas); each pair's two products are added into the lane in turn, rounded to
// nearest even, with denormal inputs and results taken as zero (the instruction's
// fixed rounding), so sums round apart from the scalar path's order, within the kernels'
// tolerance; an activation or weight below 2^-126 counts as zero.
//
// Everything here also compiles without AVX512_BF16 in the compiler's defaults (the
// target pragma below), and runs only where cpuid reported it (kernels.go: Kernels.bf16).
#include "lg.h"

#if defined(__x86_64__)
#include <immintrin.h>
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512bf16"))), apply_to = function)
#else
#pragma GCC target("avx2,fma,avx512f,avx512bw,avx512vl,avx512bf16")
#endif

#define LGB_NR 4  // weight rows a pass
#define LGB_NX 3  // activation rows a pass
#define LGB_RUN 32 // weight rows against every activation row while they are in cache
#ifndef LGB_TILED_NX
#define LGB_TILED_NX 8 // from these activation rows, tiles (lgb_tiled)
#endif

// lgb_load is 32 bf16 values at element j of row p, the n < 32 of a tail zero-filled.
static inline __m512bh lgb_load(const uint8_t *p, int64_t j, int n) {
	const __mmask32 m = n >= 32 ? (__mmask32)0xffffffffu : (__mmask32)((1u << n) - 1);
	return (__m512bh)_mm512_maskz_loadu_epi16(m, p + 2 * j);
}

// lgb_direct: dst[i*ldd + r] for NR weight rows and NX activation rows. One activation
// row takes two accumulators a pair (elements j..j+31 and j+32..j+63 of each step), so
// four rows keep eight chains of products in flight; more rows take one (2-3 rows x 4
// weight rows x 2 would leave too few of the 32 registers for the operands: gcc kept
// them on the stack, and 3 rows streamed 10.7 GB/s against 1 row's ~22; session 50).
static inline __attribute__((always_inline)) void lgb_direct(const int NR, const int NX, const uint8_t *w, int64_t wrb, const uint8_t *x,
                              int64_t xrb, int64_t k, float *dst, int64_t ldd) {
	const int two = NX == 1;
	__m512 acc[LGB_NX][LGB_NR], acc2[LGB_NX][LGB_NR];
	for (int i = 0; i < NX; i++)
		for (int r = 0; r < NR; r++) acc[i][r] = _mm512_setzero_ps(), acc2[i][r] = _mm512_setzero_ps();
	int64_t j = 0;
	for (; j + 64 <= k; j += 64) {
		__m512bh xa[LGB_NX], xb[LGB_NX];
		for (int i = 0; i < NX; i++) xa[i] = lgb_load(x + i * xrb, j, 32), xb[i] = lgb_load(x + i * xrb, j + 32, 32);
		for (int r = 0; r < NR; r++) {
			const __m512bh wa = lgb_load(w + r * wrb, j, 32), wb = lgb_load(w + r * wrb, j + 32, 32);
			for (int i = 0; i < NX; i++) {
				acc[i][r] = _mm512_dpbf16_ps(acc[i][r], wa, xa[i]);
				if (two) acc2[i][r] = _mm512_dpbf16_ps(acc2[i][r], wb, xb[i]);
				else acc[i][r] = _mm512_dpbf16_ps(acc[i][r], wb, xb[i]);
			}
		}
	}
	for (; j < k; j += 32) {
		const int n = k - j < 32 ? (int)(k - j) : 32;
		__m512bh xa[LGB_NX];
		for (int i = 0; i < NX; i++) xa[i] = lgb_load(x + i * xrb, j, n);
		for (int r = 0; r < NR; r++) {
			const __m512bh wa = lgb_load(w + r * wrb, j, n);
			for (int i = 0; i < NX; i++) acc[i][r] = _mm512_dpbf16_ps(acc[i][r], wa, xa[i]);
		}
	}
	for (int i = 0; i < NX; i++)
		for (int r = 0; r < NR; r++) dst[i * ldd + r] = _mm512_reduce_add_ps(two ? _mm512_add_ps(acc[i][r], acc2[i][r]) : acc[i][r]);
}

#define LGB_CASE(NR, NX) lgb_direct(NR, NX, wp, wrb, xp, xrb, k, dp, ldd)

// ---- prompts: tiles of 16 weight rows by LGB_KC elements, 4 x 4 micro-kernels ----
#define LGB_KC 1024 // elements of k a tile: 16 rows of 2 KB, in L1 while every activation row passes
#define LGB_TX 4
#define LGB_TR 4

// lgb_micro: dst[i*ldd + r] (=, or += when !first) the dots of elements [j0, j0 + n) of
// NR weight rows and NX activation rows.
static inline void lgb_micro(const int NR, const int NX, const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb,
                             int64_t j0, int n, float *dst, int64_t ldd, int first) {
	__m512 acc[LGB_TX][LGB_TR];
	for (int i = 0; i < NX; i++)
		for (int r = 0; r < NR; r++) acc[i][r] = _mm512_setzero_ps();
	for (int j = 0; j < n; j += 32) {
		const int m = n - j < 32 ? n - j : 32;
		__m512bh wv[LGB_TR];
		for (int r = 0; r < NR; r++) wv[r] = lgb_load(w + r * wrb, j0 + j, m);
		for (int i = 0; i < NX; i++) {
			const __m512bh xv = lgb_load(x + i * xrb, j0 + j, m);
			for (int r = 0; r < NR; r++) acc[i][r] = _mm512_dpbf16_ps(acc[i][r], wv[r], xv);
		}
	}
	for (int i = 0; i < NX; i++)
		for (int r = 0; r < NR; r++) {
			const float s = _mm512_reduce_add_ps(acc[i][r]);
			float *p = dst + i * ldd + r;
			*p = first ? s : *p + s;
		}
}

#define LGB_MICRO(NR, NX) lgb_micro(NR, NX, wp, wrb, xp, xrb, j0, n, dp, ldd, j0 == 0)

// lgb_sum2 adds a's and b's lanes pairwise within each 128-bit lane: [a0+a2, b0+b2,
// a1+a3, b1+b3] there.
static inline __m512 lgb_sum2(__m512 a, __m512 b) { return _mm512_add_ps(_mm512_unpacklo_ps(a, b), _mm512_unpackhi_ps(a, b)); }

// lgb_sum4 finishes two lgb_sum2 results: [a, b, c, d] in each 128-bit lane, each that
// lane's four elements of its vector summed.
static inline __m512 lgb_sum4(__m512 ab, __m512 cd) {
	const __m512d x = _mm512_castps_pd(ab), y = _mm512_castps_pd(cd);
	return _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(x, y)), _mm512_castpd_ps(_mm512_unpackhi_pd(x, y)));
}

// lgb_sum16 is the 16 lane sums of q[t] = lgb_sum4(...) of vectors 4t .. 4t + 3 as one
// vector (element 4t + u: vector 4t + u's sum), where _mm512_reduce_add_ps would take each
// vector apart (~9 instructions each against ~3).
static inline __m512 lgb_sum16(__m512 q0, __m512 q1, __m512 q2, __m512 q3) {
	const __m512 z0 = _mm512_add_ps(_mm512_shuffle_f32x4(q0, q1, 0x88), _mm512_shuffle_f32x4(q0, q1, 0xdd));
	const __m512 z1 = _mm512_add_ps(_mm512_shuffle_f32x4(q2, q3, 0x88), _mm512_shuffle_f32x4(q2, q3, 0xdd));
	return _mm512_add_ps(_mm512_shuffle_f32x4(z0, z1, 0x88), _mm512_shuffle_f32x4(z0, z1, 0xdd));
}

// lgb_micro44 is lgb_micro(4, 4, ...) with the 16 sums taken together (lgb_sum16) and
// stored four floats a row.
static inline void lgb_micro44(const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb, int64_t j0, int n, float *dst,
                               int64_t ldd, int first) {
	__m512 acc[16];
	for (int t = 0; t < 16; t++) acc[t] = _mm512_setzero_ps();
	for (int j = 0; j < n; j += 32) {
		const int m = n - j < 32 ? n - j : 32;
		__m512bh wv[4];
		for (int r = 0; r < 4; r++) wv[r] = lgb_load(w + r * wrb, j0 + j, m);
		for (int i = 0; i < 4; i++) {
			const __m512bh xv = lgb_load(x + i * xrb, j0 + j, m);
			for (int r = 0; r < 4; r++) acc[4 * i + r] = _mm512_dpbf16_ps(acc[4 * i + r], wv[r], xv);
		}
	}
#define LGB_Q(t) lgb_sum4(lgb_sum2(acc[4 * (t)], acc[4 * (t) + 1]), lgb_sum2(acc[4 * (t) + 2], acc[4 * (t) + 3]))
	const __m512 s = lgb_sum16(LGB_Q(0), LGB_Q(1), LGB_Q(2), LGB_Q(3));
#undef LGB_Q
	// (each lane a constant: clang rejects a loop's i as the extract's immediate)
	const __m128 q[4] = {_mm512_extractf32x4_ps(s, 0), _mm512_extractf32x4_ps(s, 1), _mm512_extractf32x4_ps(s, 2),
	                     _mm512_extractf32x4_ps(s, 3)};
	for (int i = 0; i < 4; i++) {
		__m128 v = q[i];
		float *p = dst + i * ldd;
		if (!first) v = _mm_add_ps(_mm_loadu_ps(p), v);
		_mm_storeu_ps(p, v);
	}
}

static void lgb_tiled(const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb, int64_t nx, int64_t k, int64_t r0,
                      int64_t r1, float *dst, int64_t ldd) {
	for (int64_t rb = r0; rb < r1; rb += 16) {
		const int nrb = (int)(r1 - rb < 16 ? r1 - rb : 16);
		for (int64_t j0 = 0; j0 < k; j0 += LGB_KC) {
			const int n = (int)(k - j0 < LGB_KC ? k - j0 : LGB_KC);
			for (int64_t i0 = 0; i0 < nx; i0 += LGB_TX) {
				const int nxx = (int)(nx - i0 < LGB_TX ? nx - i0 : LGB_TX);
				for (int r = 0; r < nrb; r += LGB_TR) {
					const int nr = nrb - r < LGB_TR ? nrb - r : LGB_TR;
					const uint8_t *wp = w + (rb + r) * wrb, *xp = x + i0 * xrb;
					float *dp = dst + i0 * ldd + rb + r;
					switch (nr * 8 + nxx) {
					case 8 + 1: LGB_MICRO(1, 1); break;
					case 8 + 2: LGB_MICRO(1, 2); break;
					case 8 + 3: LGB_MICRO(1, 3); break;
					case 8 + 4: LGB_MICRO(1, 4); break;
					case 16 + 1: LGB_MICRO(2, 1); break;
					case 16 + 2: LGB_MICRO(2, 2); break;
					case 16 + 3: LGB_MICRO(2, 3); break;
					case 16 + 4: LGB_MICRO(2, 4); break;
					case 24 + 1: LGB_MICRO(3, 1); break;
					case 24 + 2: LGB_MICRO(3, 2); break;
					case 24 + 3: LGB_MICRO(3, 3); break;
					case 24 + 4: LGB_MICRO(3, 4); break;
					case 32 + 1: LGB_MICRO(4, 1); break;
					case 32 + 2: LGB_MICRO(4, 2); break;
					case 32 + 3: LGB_MICRO(4, 3); break;
					default: lgb_micro44(wp, wrb, xp, xrb, j0, n, dp, ldd, j0 == 0); break;
					}
				}
			}
		}
	}
}

int lg_gemm_bf16_avx512(const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb, int64_t nx, int64_t k, int64_t r0,
                        int64_t r1, float *dst, int64_t ldd) {
	if (nx >= LGB_TILED_NX) {
		lgb_tiled(w, wrb, x, xrb, nx, k, r0, r1, dst, ldd);
		return 0;
	}
	for (int64_t a = r0; a < r1; a += LGB_RUN)
		for (int64_t i0 = 0; i0 < nx; i0 += LGB_NX) {
			const int nxx = (int)(nx - i0 < LGB_NX ? nx - i0 : LGB_NX);
			const int64_t z = r1 - a < LGB_RUN ? r1 : a + LGB_RUN;
			for (int64_t r = a; r < z; r += LGB_NR) {
				const int nr = (int)(z - r < LGB_NR ? z - r : LGB_NR);
				const uint8_t *wp = w + r * wrb, *xp = x + i0 * xrb;
				float *dp = dst + i0 * ldd + r;
				switch (nr * 4 + nxx) {
				case 4 + 1: LGB_CASE(1, 1); break;
				case 4 + 2: LGB_CASE(1, 2); break;
				case 4 + 3: LGB_CASE(1, 3); break;
				case 8 + 1: LGB_CASE(2, 1); break;
				case 8 + 2: LGB_CASE(2, 2); break;
				case 8 + 3: LGB_CASE(2, 3); break;
				case 12 + 1: LGB_CASE(3, 1); break;
				case 12 + 2: LGB_CASE(3, 2); break;
				case 12 + 3: LGB_CASE(3, 3); break;
				case 16 + 1: LGB_CASE(4, 1); break;
				case 16 + 2: LGB_CASE(4, 2); break;
				default: LGB_CASE(4, 3); break;
				}
			}
		}
	return 0;
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
