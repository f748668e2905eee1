// kq_avx512.c: placeholder, AVX-512 paths forward to AVX2 for now.
#include "kq.h"
#if defined(__x86_64__)
void ember_kq_quantize_q8k_avx512(const float *x, uint8_t *y, int64_t nblocks) { ember_kq_quantize_q8k_avx2(x, y, nblocks); }
void ember_kq_dequant_avx512(int t, const uint8_t *x, float *y, int64_t nblocks) { ember_kq_dequant_avx2(t, x, y, nblocks); }
void ember_kq_gemm_avx512(int t, const uint8_t *w, int64_t wrb, const uint8_t *xq, int64_t xrb,
                          int64_t nx, int64_t nb, int64_t r0, int64_t r1, float *dst, int64_t ldd) {
	ember_kq_gemm_avx2(t, w, wrb, xq, xrb, nx, nb, r0, r1, dst, ldd);
}
void ember_kq_gemm_avx512vnni(int t, const uint8_t *w, int64_t wrb, const uint8_t *xq, int64_t xrb,
                              int64_t nx, int64_t nb, int64_t r0, int64_t r1, float *dst, int64_t ldd) {
	ember_kq_gemm_avx2(t, w, wrb, xq, xrb, nx, nb, r0, r1, dst, ldd);
}
#endif
