// lg.c: the legacy-quant and float kernels' entry points (kernels.h) and their scalar C
// reference path. Types: weights Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 (against Q8_0 or Q8_1
// activations), F16, BF16, F32 (against the same type); activations Q8_0, Q8_1, F16,
// BF16, F32. The SIMD paths live in lg_avx2.c (with lg_avx2_conv.c), lg_avx512.c and
// lg_neon.c.
//
// The scalar code follows package quant operation for operation, so its quantize and
// dequantize are bit-identical and its dot products round as llama.cpp's generic C does.
#include <math.h>
#include "lg.h"

// ---- quantize ----

static void lg_quant_q8(const float *x, uint8_t *y, int64_t n, int q81) {
	const int bs = q81 ? 36 : 34;
	for (int64_t ib = 0; ib < n / LG_QK; ib++) lg_quant_q8_block(x + ib * LG_QK, y + ib * bs, q81);
}

int lg_quant_scalar(int vdt, const float *x, uint8_t *y, int64_t nrows, int64_t n) {
	const int64_t total = nrows * n;
	switch (vdt) {
	case EMBER_Q8_0: case EMBER_Q8_1:
		// Rows of whole blocks are packed back to back, so the rows are one long row.
		lg_quant_q8(x, y, total, vdt == EMBER_Q8_1);
		return 0;
	case EMBER_F16:
		for (int64_t i = 0; i < total; i++) lg_wr16(y + 2 * i, lg_f2h(x[i]));
		return 0;
	case EMBER_BF16:
		for (int64_t i = 0; i < total; i++) lg_wr16(y + 2 * i, lg_f2bf(x[i]));
		return 0;
	case EMBER_F32:
		memcpy(y, x, (size_t)total * 4);
		return 0;
	}
	return -1;
}

int ember_quantize_rows_lg(int isa, int vdt, const float *x, void *y, int64_t nrows, int64_t n) {
	switch (vdt) {
	case EMBER_Q8_0: case EMBER_Q8_1: case EMBER_F16: case EMBER_BF16: case EMBER_F32: break;
	default: return -1;
	}
	if ((vdt == EMBER_Q8_0 || vdt == EMBER_Q8_1) && n % LG_QK != 0) return -1;
	if (nrows <= 0 || n <= 0) return 0;
#if defined(__x86_64__)
	if (isa >= EMBER_ISA_AVX2 && isa <= EMBER_ISA_AVX512VNNI) return lg_quantize_avx2(vdt, x, y, nrows, n);
#endif
#if defined(__aarch64__)
	if (isa == EMBER_ISA_NEON) return lg_quantize_neon(vdt, x, y, nrows, n);
#endif
	return lg_quant_scalar(vdt, x, (uint8_t *)y, nrows, n);
}

// ---- dequantize ----

int lg_dequant_scalar(int t, const uint8_t *x, float *y, int64_t n) {
	const int64_t nb = n / LG_QK;
	switch (t) {
	case EMBER_F32:
		memcpy(y, x, (size_t)n * 4);
		return 0;
	case EMBER_F16:
		for (int64_t i = 0; i < n; i++) y[i] = lg_h2f(lg_rd16(x + 2 * i));
		return 0;
	case EMBER_BF16:
		for (int64_t i = 0; i < n; i++) y[i] = lg_bf2f(lg_rd16(x + 2 * i));
		return 0;
	case EMBER_Q4_0:
		for (int64_t ib = 0; ib < nb; ib++) {
			const uint8_t *b = x + ib * 18;
			float *o = y + ib * LG_QK;
			const float d = lg_h2f(lg_rd16(b));
			for (int j = 0; j < 16; j++) {
				o[j] = (float)((int)(b[2 + j] & 15) - 8) * d;
				o[j + 16] = (float)((int)(b[2 + j] >> 4) - 8) * d;
			}
		}
		return 0;
	case EMBER_Q4_1:
		for (int64_t ib = 0; ib < nb; ib++) {
			const uint8_t *b = x + ib * 20;
			float *o = y + ib * LG_QK;
			const float d = lg_h2f(lg_rd16(b)), m = lg_h2f(lg_rd16(b + 2));
			for (int j = 0; j < 16; j++) {
				float p0 = (float)(b[4 + j] & 15) * d, p1 = (float)(b[4 + j] >> 4) * d;
				LG_OPAQUE(p0);
				LG_OPAQUE(p1);
				o[j] = p0 + m;
				o[j + 16] = p1 + m;
			}
		}
		return 0;
	case EMBER_Q5_0:
		for (int64_t ib = 0; ib < nb; ib++) {
			const uint8_t *b = x + ib * 22;
			float *o = y + ib * LG_QK;
			const float d = lg_h2f(lg_rd16(b));
			const uint32_t qh = lg_rd32(b + 2);
			for (int j = 0; j < 16; j++) {
				const int h0 = (qh >> j) & 1, h1 = (qh >> (j + 16)) & 1;
				o[j] = (float)((int)((b[6 + j] & 15) | h0 << 4) - 16) * d;
				o[j + 16] = (float)((int)((b[6 + j] >> 4) | h1 << 4) - 16) * d;
			}
		}
		return 0;
	case EMBER_Q5_1:
		for (int64_t ib = 0; ib < nb; ib++) {
			const uint8_t *b = x + ib * 24;
			float *o = y + ib * LG_QK;
			const float d = lg_h2f(lg_rd16(b)), m = lg_h2f(lg_rd16(b + 2));
			const uint32_t qh = lg_rd32(b + 4);
			for (int j = 0; j < 16; j++) {
				const int h0 = (qh >> j) & 1, h1 = (qh >> (j + 16)) & 1;
				float p0 = (float)((b[8 + j] & 15) | h0 << 4) * d;
				float p1 = (float)((b[8 + j] >> 4) | h1 << 4) * d;
				LG_OPAQUE(p0);
				LG_OPAQUE(p1);
				o[j] = p0 + m;
				o[j + 16] = p1 + m;
			}
		}
		return 0;
	case EMBER_Q8_0: case EMBER_Q8_1: {
		const int bs = t == EMBER_Q8_1 ? 36 : 34, qo = t == EMBER_Q8_1 ? 4 : 2;
		for (int64_t ib = 0; ib < nb; ib++) {
			const uint8_t *b = x + ib * bs;
			const float d = lg_h2f(lg_rd16(b));
			for (int j = 0; j < LG_QK; j++) y[ib * LG_QK + j] = (float)(int8_t)b[qo + j] * d;
		}
		return 0;
	}
	}
	return -1;
}

int ember_dequantize_row_lg(int isa, int t, const void *x, float *y, int64_t n) {
	switch (t) {
	case EMBER_F32: case EMBER_F16: case EMBER_BF16: break;
	case EMBER_Q4_0: case EMBER_Q4_1: case EMBER_Q5_0: case EMBER_Q5_1: case EMBER_Q8_0: case EMBER_Q8_1:
		if (n % LG_QK != 0) return -1;
		break;
	default: return -1;
	}
	if (n <= 0) return 0;
#if defined(__x86_64__)
	if (isa >= EMBER_ISA_AVX2 && isa <= EMBER_ISA_AVX512VNNI) return lg_dequantize_avx2(t, x, y, n);
#endif
#if defined(__aarch64__)
	if (isa == EMBER_ISA_NEON) return lg_dequantize_neon(t, x, y, n);
#endif
	return lg_dequant_scalar(t, (const uint8_t *)x, y, n);
}

// ---- dot products (the scalar path of ember_gemm_lg) ----

float lg_dot_scalar(int wtype, const uint8_t *w, const uint8_t *x, int64_t k) {
	const int64_t nb = k / LG_QK;
	float sumf = 0;
	switch (wtype) {
	case EMBER_F32: {
		double s = 0;
		const float *a = (const float *)(const void *)w, *b = (const float *)(const void *)x;
		for (int64_t i = 0; i < k; i++) {
			float wa, xb;
			memcpy(&wa, a + i, 4);
			memcpy(&xb, b + i, 4);
			s += (double)(wa * xb);
		}
		return (float)s;
	}
	case EMBER_F16: {
		double s = 0;
		for (int64_t i = 0; i < k; i++) s += (double)(lg_h2f(lg_rd16(w + 2 * i)) * lg_h2f(lg_rd16(x + 2 * i)));
		return (float)s;
	}
	case EMBER_BF16: {
		double s = 0;
		for (int64_t i = 0; i < k; i++) s += (double)(lg_bf2f(lg_rd16(w + 2 * i)) * lg_bf2f(lg_rd16(x + 2 * i)));
		return (float)s;
	}
	case EMBER_Q4_0:
		for (int64_t ib = 0; ib < nb; ib++) {
			const uint8_t *bw = w + ib * 18, *bx = x + ib * 34;
			int32_t sumi = 0;
			for (int j = 0; j < 16; j++) {
				sumi += ((int)(bw[2 + j] & 15) - 8) * (int8_t)bx[2 + j];
				sumi += ((int)(bw[2 + j] >> 4) - 8) * (int8_t)bx[18 + j];
			}
			sumf += (float)sumi * lg_h2f(lg_rd16(bw)) * lg_h2f(lg_rd16(bx));
		}
		return sumf;
	case EMBER_Q4_1:
		for (int64_t ib = 0; ib < nb; ib++) {
			const uint8_t *bw = w + ib * 20, *bx = x + ib * 36;
			int32_t sumi = 0;
			for (int j = 0; j < 16; j++) {
				sumi += (bw[4 + j] & 15) * (int8_t)bx[4 + j];
				sumi += (bw[4 + j] >> 4) * (int8_t)bx[20 + j];
			}
			const float dd = lg_h2f(lg_rd16(bw)) * lg_h2f(lg_rd16(bx));
			sumf += dd * (float)sumi + lg_h2f(lg_rd16(bw + 2)) * lg_h2f(lg_rd16(bx + 2));
		}
		return sumf;
	case EMBER_Q5_0:
		for (int64_t ib = 0; ib < nb; ib++) {
			const uint8_t *bw = w + ib * 22, *bx = x + ib * 34;
			const uint32_t qh = lg_rd32(bw + 2);
			int32_t sumi = 0;
			for (int j = 0; j < 16; j++) {
				const int h0 = (qh >> j) & 1, h1 = (qh >> (j + 16)) & 1;
				sumi += ((int)((bw[6 + j] & 15) | h0 << 4) - 16) * (int8_t)bx[2 + j];
				sumi += ((int)((bw[6 + j] >> 4) | h1 << 4) - 16) * (int8_t)bx[18 + j];
			}
			sumf += lg_h2f(lg_rd16(bw)) * lg_h2f(lg_rd16(bx)) * (float)sumi;
		}
		return sumf;
	case EMBER_Q5_1:
		for (int64_t ib = 0; ib < nb; ib++) {
			const uint8_t *bw = w + ib * 24, *bx = x + ib * 36;
			const uint32_t qh = lg_rd32(bw + 4);
			int32_t sumi = 0;
			for (int j = 0; j < 16; j++) {
				const int h0 = (qh >> j) & 1, h1 = (qh >> (j + 16)) & 1;
				sumi += ((bw[8 + j] & 15) | h0 << 4) * (int8_t)bx[4 + j];
				sumi += ((bw[8 + j] >> 4) | h1 << 4) * (int8_t)bx[20 + j];
			}
			const float dd = lg_h2f(lg_rd16(bw)) * lg_h2f(lg_rd16(bx));
			sumf += dd * (float)sumi + lg_h2f(lg_rd16(bw + 2)) * lg_h2f(lg_rd16(bx + 2));
		}
		return sumf;
	case EMBER_Q8_0:
		for (int64_t ib = 0; ib < nb; ib++) {
			const uint8_t *bw = w + ib * 34, *bx = x + ib * 34;
			int32_t sumi = 0;
			for (int j = 0; j < LG_QK; j++) sumi += (int8_t)bw[2 + j] * (int8_t)bx[2 + j];
			sumf += (float)sumi * (lg_h2f(lg_rd16(bw)) * lg_h2f(lg_rd16(bx)));
		}
		return sumf;
	}
	return 0;
}

static int lg_gemm_known(int t) {
	switch (t) {
	case EMBER_F32: case EMBER_F16: case EMBER_BF16:
		return 1;
	case EMBER_Q4_0: case EMBER_Q4_1: case EMBER_Q5_0: case EMBER_Q5_1: case EMBER_Q8_0:
		return 2;
	}
	return 0;
}

int ember_gemm_lg(int isa, int wtype, const void *w, int64_t wrb, const void *xq, int64_t xrb,
                  int64_t nx, int64_t k, int64_t r0, int64_t r1, float *dst, int64_t ldd) {
	const int kind = lg_gemm_known(wtype);
	if (kind == 0 || (kind == 2 && k % LG_QK != 0)) return -1;
	if (nx <= 0 || r1 <= r0) return 0;
	const uint8_t *wb = (const uint8_t *)w, *xb = (const uint8_t *)xq;
	if (k <= 0) {
		for (int64_t i = 0; i < nx; i++)
			for (int64_t r = r0; r < r1; r++) dst[i * ldd + r] = 0;
		return 0;
	}
#if defined(__x86_64__)
	if (isa == EMBER_ISA_AVX512 || isa == EMBER_ISA_AVX512VNNI)
		return lg_gemm_avx512(isa == EMBER_ISA_AVX512VNNI, wtype, wb, wrb, xb, xrb, nx, k, r0, r1, dst, ldd);
	if (isa == EMBER_ISA_AVX2) return lg_gemm_avx2(wtype, wb, wrb, xb, xrb, nx, k, r0, r1, dst, ldd);
	if (isa == EMBER_ISA_AVX2VNNI) return lg_gemm_avxvnni(wtype, wb, wrb, xb, xrb, nx, k, r0, r1, dst, ldd);
#endif
#if defined(__aarch64__)
	if (isa == EMBER_ISA_NEON) return lg_gemm_neon(wtype, wb, wrb, xb, xrb, nx, k, r0, r1, dst, ldd);
#endif
	// Scalar: one weight row against every activation row while it is in cache.
	for (int64_t r = r0; r < r1; r++)
		for (int64_t i = 0; i < nx; i++) dst[i * ldd + r] = lg_dot_scalar(wtype, wb + r * wrb, xb + i * xrb, k);
	return 0;
}

int ember_gemm_bf16(const void *w, int64_t wrb, const void *xq, int64_t xrb, int64_t nx, int64_t k, int64_t r0,
                    int64_t r1, float *dst, int64_t ldd) {
#if defined(__x86_64__)
	if (k <= 0) return -1; // ember_gemm_lg writes the zeros
	if (nx <= 0 || r1 <= r0) return 0;
	return lg_gemm_bf16_avx512((const uint8_t *)w, wrb, (const uint8_t *)xq, xrb, nx, k, r0, r1, dst, ldd);
#else
	(void)w, (void)wrb, (void)xq, (void)xrb, (void)nx, (void)k, (void)r0, (void)r1, (void)dst, (void)ldd;
	return -1;
#endif
}
