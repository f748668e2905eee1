// kq.c: the K-quant entry points of kernels.h (Q2_K..Q6_K weights, Q8_K activations).
// Each dispatches on the path; a path this build lacks falls back to the scalar code.
#include "kq.h"

int ember_quantize_rows_kq(int isa, int vdt, const float *x, void *y, int64_t nrows, int64_t n) {
	if (vdt != EMBER_Q8_K || n % KQ_QK != 0) return -1;
	int64_t nblocks = nrows * (n / KQ_QK);
	uint8_t *yb = (uint8_t *)y;
	switch (isa) {
#if defined(__x86_64__)
	case EMBER_ISA_AVX2: ember_kq_quantize_q8k_avx2(x, yb, nblocks); return 0;
	case EMBER_ISA_AVX512:
	case EMBER_ISA_AVX512VNNI: ember_kq_quantize_q8k_avx512(x, yb, nblocks); return 0;
#endif
#if defined(__aarch64__)
	case EMBER_ISA_NEON: ember_kq_quantize_q8k_neon(x, yb, nblocks); return 0;
#endif
	default: ember_kq_quantize_q8k_scalar(x, yb, nblocks); return 0;
	}
}

int ember_gemm_kq(int isa, int wtype, const void *w, int64_t wrb, const void *xq, int64_t xrb,
                  int64_t nx, int64_t k, int64_t r0, int64_t r1, float *dst, int64_t ldd) {
	if (kq_wbytes(wtype) == 0 || k % KQ_QK != 0) return -1;
	if (nx <= 0 || r1 <= r0) return 0;
	const uint8_t *wb = (const uint8_t *)w, *xb = (const uint8_t *)xq;
	int64_t nb = k / KQ_QK;
	if (nb == 0) { // empty dot products
		for (int64_t i = 0; i < nx; i++)
			for (int64_t r = r0; r < r1; r++) dst[i * ldd + r] = 0;
		return 0;
	}
	switch (isa) {
#if defined(__x86_64__)
	case EMBER_ISA_AVX2: ember_kq_gemm_avx2(wtype, wb, wrb, xb, xrb, nx, nb, r0, r1, dst, ldd); return 0;
	case EMBER_ISA_AVX2VNNI: ember_kq_gemm_avxvnni(wtype, wb, wrb, xb, xrb, nx, nb, r0, r1, dst, ldd); return 0;
	case EMBER_ISA_AVX512: ember_kq_gemm_avx512(wtype, wb, wrb, xb, xrb, nx, nb, r0, r1, dst, ldd); return 0;
	case EMBER_ISA_AVX512VNNI: ember_kq_gemm_avx512vnni(wtype, wb, wrb, xb, xrb, nx, nb, r0, r1, dst, ldd); return 0;
#endif
#if defined(__aarch64__)
	case EMBER_ISA_NEON: ember_kq_gemm_neon(wtype, wb, wrb, xb, xrb, nx, nb, r0, r1, dst, ldd); return 0;
#endif
	default: ember_kq_gemm_scalar(wtype, wb, wrb, xb, xrb, nx, nb, r0, r1, dst, ldd); return 0;
	}
}

int ember_dequantize_row_kq(int isa, int t, const void *x, float *y, int64_t n) {
	if ((kq_wbytes(t) == 0 && t != EMBER_Q8_K) || n % KQ_QK != 0) return -1;
	const uint8_t *xb = (const uint8_t *)x;
	int64_t nblocks = n / KQ_QK;
	switch (isa) {
#if defined(__x86_64__)
	case EMBER_ISA_AVX2: ember_kq_dequant_avx2(t, xb, y, nblocks); return 0;
	case EMBER_ISA_AVX512:
	case EMBER_ISA_AVX512VNNI: ember_kq_dequant_avx512(t, xb, y, nblocks); return 0;
#endif
#if defined(__aarch64__)
	case EMBER_ISA_NEON: ember_kq_dequant_neon(t, xb, y, nblocks); return 0;
#endif
	default: ember_kq_dequant_scalar(t, xb, y, nblocks); return 0;
	}
}
