// lg_avx512.c: AVX-512 paths (placeholder: the AVX2 path).
#include "lg.h"
#if defined(__x86_64__)
int lg_gemm_avx512(int vnni, int wtype, const uint8_t *w, int64_t wrb, const uint8_t *xq,
                   int64_t xrb, int64_t nx, int64_t k, int64_t r0, int64_t r1, float *dst,
                   int64_t ldd) {
	(void)vnni;
	return lg_gemm_avx2(wtype, w, wrb, xq, xrb, nx, k, r0, r1, dst, ldd);
}
#endif
