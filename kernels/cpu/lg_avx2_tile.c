// lg_avx2_tile.c: the prefill gemm of the AVX2 path, which lg_avx2.c dispatches here for
// larger batches: the quantized types through lg_rows8.h (a weight row per lane), the
// float types on register tiles.
//
// Stack use: 58 KB for the quantized types (lg_rows8.h); 16 KB of converted activations
// for the float types.
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

#define LG_TX 4 // activation rows per float micro-kernel

#include "lg_rows8.h"

// lg_tiled_q_avx2: the quantized types' batches go to lg_rows8.h (a weight row per lane;
// it replaced 2x4 register tiles over interleaved blocks in session 79).
void lg_tiled_q_avx2(int T, const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb, int64_t nx,
                     int64_t k, int64_t r0, int64_t r1, float *dst, int64_t ldd) {
	switch (T) {
	case EMBER_Q4_0: lr8_gemm(EMBER_Q4_0, w, wrb, x, xrb, nx, k / LG_QK, r0, r1, dst, ldd); return;
	case EMBER_Q4_1: lr8_gemm(EMBER_Q4_1, w, wrb, x, xrb, nx, k / LG_QK, r0, r1, dst, ldd); return;
	case EMBER_Q5_0: lr8_gemm(EMBER_Q5_0, w, wrb, x, xrb, nx, k / LG_QK, r0, r1, dst, ldd); return;
	case EMBER_Q5_1: lr8_gemm(EMBER_Q5_1, w, wrb, x, xrb, nx, k / LG_QK, r0, r1, dst, ldd); return;
	default: lr8_gemm(EMBER_Q8_0, w, wrb, x, xrb, nx, k / LG_QK, r0, r1, dst, ldd); return;
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
