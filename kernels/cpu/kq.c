// Placeholder until the K-quant kernels land: handles nothing.
#include "kernels.h"

int ember_quantize_rows_kq(int isa, int vdt, const float *x, void *y, int64_t nrows, int64_t n) { return -1; }
int ember_gemm_kq(int isa, int wtype, const void *w, int64_t wrb, const void *xq, int64_t xrb,
                  int64_t nx, int64_t k, int64_t r0, int64_t r1, float *dst, int64_t ldd) { return -1; }
int ember_dequantize_row_kq(int isa, int t, const void *x, float *y, int64_t n) { return -1; }
