// Placeholder scalar row ops until the SIMD versions land.
#include <math.h>
#include "kernels.h"

void ember_rmsnorm(int isa, const float *x, const float *w, float *y, int64_t n, float eps) {
	double s = 0;
	for (int64_t i = 0; i < n; i++) s += (double)x[i] * x[i];
	float scale = 1.0f / sqrtf((float)(s / n) + eps);
	for (int64_t i = 0; i < n; i++) y[i] = x[i] * scale * w[i];
}
void ember_add(int isa, const float *a, const float *b, float *y, int64_t n) { for (int64_t i = 0; i < n; i++) y[i] = a[i] + b[i]; }
void ember_mul(int isa, const float *a, const float *b, float *y, int64_t n) { for (int64_t i = 0; i < n; i++) y[i] = a[i] * b[i]; }
void ember_swiglu(int isa, const float *g, const float *u, float *y, int64_t n) { for (int64_t i = 0; i < n; i++) y[i] = g[i] / (1.0f + expf(-g[i])) * u[i]; }
void ember_f32_to_f16(int isa, const float *x, uint16_t *y, int64_t n) {}
void ember_f16_to_f32(int isa, const uint16_t *x, float *y, int64_t n) {}
void ember_rope(int isa, float *x, int64_t nheads, int64_t head_dim, int64_t dims, int neox, const float *cs) {}
void ember_attention(int isa, const float *q, const uint16_t *k, int64_t k_stride, const uint16_t *v, int64_t v_stride,
                     int64_t n_kv, int64_t head_dim, int64_t v_head_dim, float scale, float *out, float *scratch) {}
