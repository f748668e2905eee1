// Scalar row ops (the reference path; SIMD versions may replace them per ISA).
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
#include <string.h>

// IEEE half <-> single, round to nearest even, by bit manipulation.
static inline uint16_t f32_to_f16(float f) {
	uint32_t x;
	memcpy(&x, &f, 4);
	uint32_t sign = (x >> 16) & 0x8000u;
	uint32_t ax = x & 0x7fffffffu;
	if (ax >= 0x7f800000u) return (uint16_t)(sign | (ax > 0x7f800000u ? 0x7e00u : 0x7c00u));
	if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); // rounds to >= 65520: inf
	if (ax < 0x38800000u) { // subnormal half (or zero)
		if (ax < 0x33000000u) return (uint16_t)sign; // below half the smallest subnormal
		uint32_t m = (ax & 0x7fffffu) | 0x800000u;
		// value = m * 2^(e-150) and a half subnormal counts units of 2^-24: h = m >> (126 - e)
		int shift = 126 - (int)(ax >> 23); // 14..24
		uint32_t h = m >> shift;
		uint32_t rem = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
		if (rem > halfway || (rem == halfway && (h & 1))) h++;
		return (uint16_t)(sign | h);
	}
	uint32_t h = ((ax >> 13) - (112u << 10));
	uint32_t rem = ax & 0x1fffu;
	if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++;
	return (uint16_t)(sign | h);
}

static inline float f16_to_f32(uint16_t h) {
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, x;
	if (e == 0) {
		if (m == 0) x = sign;
		else { // subnormal: normalize
			e = 113;
			while (!(m & 0x400)) { m <<= 1; e--; }
			x = sign | (e << 23) | ((m & 0x3ff) << 13);
		}
	} else if (e == 31) x = sign | 0x7f800000u | (m << 13);
	else x = sign | ((e + 112) << 23) | (m << 13);
	float f;
	memcpy(&f, &x, 4);
	return f;
}

void ember_f32_to_f16(int isa, const float *x, uint16_t *y, int64_t n) { for (int64_t i = 0; i < n; i++) y[i] = f32_to_f16(x[i]); }
void ember_f16_to_f32(int isa, const uint16_t *x, float *y, int64_t n) { for (int64_t i = 0; i < n; i++) y[i] = f16_to_f32(x[i]); }

void ember_rope(int isa, float *x, int64_t nheads, int64_t head_dim, int64_t dims, int neox, const float *cs) {
	int64_t half = dims / 2;
	for (int64_t h = 0; h < nheads; h++) {
		float *hx = x + h * head_dim;
		for (int64_t i = 0; i < half; i++) {
			int64_t a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
			float c = cs[2 * i], s = cs[2 * i + 1], x0 = hx[a], x1 = hx[b];
			hx[a] = x0 * c - x1 * s;
			hx[b] = x0 * s + x1 * c;
		}
	}
}

void ember_attention(int isa, const float *q, const uint16_t *k, int64_t k_stride, const uint16_t *v, int64_t v_stride,
                     int64_t n_kv, int64_t head_dim, int64_t v_head_dim, float scale, float *out, float *scratch) {
	float *s = scratch, *qh = scratch + n_kv;
	for (int64_t j = 0; j < head_dim; j++) qh[j] = f16_to_f32(f32_to_f16(q[j]));
	float mx = -INFINITY;
	for (int64_t t = 0; t < n_kv; t++) {
		double d = 0;
		const uint16_t *kt = k + t * k_stride;
		for (int64_t j = 0; j < head_dim; j++) d += (double)qh[j] * f16_to_f32(kt[j]);
		s[t] = (float)d * scale;
		if (s[t] > mx) mx = s[t];
	}
	double sum = 0;
	for (int64_t t = 0; t < n_kv; t++) { s[t] = expf(s[t] - mx); sum += s[t]; }
	float inv = (float)(1.0 / sum);
	for (int64_t j = 0; j < v_head_dim; j++) out[j] = 0;
	for (int64_t t = 0; t < n_kv; t++) {
		float p = f16_to_f32(f32_to_f16(s[t] * inv));
		const uint16_t *vt = v + t * v_stride;
		for (int64_t j = 0; j < v_head_dim; j++) out[j] += p * f16_to_f32(vt[j]);
	}
}
