// elem.c: the row-wise ops of kernels.h (RMSNorm, add, mul, SwiGLU, half conversions,
// RoPE, attention of one query head): dispatch and the scalar C reference path. The SIMD
// paths live in elem_avx2.c, elem_avx512.c and elem_neon.c and are tested against this
// code's semantics (package cpu's tests use plain Go references with the same steps).
#include <math.h>
#include "elem.h"

// ---- scalar reference ----

static void elem_rmsnorm_scalar(const float *x, const float *w, float *y, int64_t n, float eps) {
	double s = 0;
	for (int64_t i = 0; i < n; i++) s += (double)(x[i] * x[i]);
	const float scale = 1.0f / sqrtf((float)(s / (double)n) + eps);
	for (int64_t i = 0; i < n; i++) y[i] = x[i] * scale * w[i];
}

static void elem_swiglu_scalar(const float *g, const float *u, float *y, int64_t n) {
	for (int64_t i = 0; i < n; i++) y[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
}

static void elem_rope_scalar(float *x, int64_t nheads, int64_t head_dim, int64_t dims, int neox, const float *cs) {
	const int64_t half = dims / 2;
	for (int64_t h = 0; h < nheads; h++) {
		float *xh = x + h * head_dim;
		for (int64_t i = 0; i < half; i++) {
			const int64_t i0 = neox ? i : 2 * i, i1 = neox ? i + half : 2 * i + 1;
			const float c = cs[2 * i], s = cs[2 * i + 1], x0 = xh[i0], x1 = xh[i1];
			xh[i0] = x0 * c - x1 * s;
			xh[i1] = x0 * s + x1 * c;
		}
	}
}

// elem.h's softmax steps, shared with attnq8_scalar.
float elem_softmax_exp_scalar(float *s, int64_t n) {
	float m = -INFINITY;
	for (int64_t t = 0; t < n; t++)
		if (s[t] > m) m = s[t];
	double sum = 0;
	for (int64_t t = 0; t < n; t++) {
		const float e = expf(s[t] - m);
		s[t] = e;
		sum += (double)e;
	}
	return (float)(1.0 / sum);
}

void elem_attention_scalar(const float *q, const uint16_t *k, int64_t k_stride, const uint16_t *v, int64_t v_stride, const int32_t *rows,
                           int64_t n_kv, int64_t head_dim, int64_t v_head_dim, float scale, float *out,
                           float *scratch) {
	float *s = scratch, *q16 = scratch + n_kv;
	for (int64_t d = 0; d < head_dim; d++) q16[d] = lg_h2f(lg_f2h(q[d]));
	for (int64_t t = 0; t < n_kv; t++) {
		const uint16_t *kt = k + EROW(rows, t) * k_stride;
		float dot = 0;
		for (int64_t d = 0; d < head_dim; d++) dot += q16[d] * lg_h2f(kt[d]);
		s[t] = scale * dot;
	}
	const float inv = elem_softmax_exp_scalar(s, n_kv);
	for (int64_t d = 0; d < v_head_dim; d++) out[d] = 0;
	for (int64_t t = 0; t < n_kv; t++) {
		const float p = lg_h2f(lg_f2h(s[t] * inv));
		const uint16_t *vt = v + EROW(rows, t) * v_stride;
		for (int64_t d = 0; d < v_head_dim; d++) out[d] += p * lg_h2f(vt[d]);
	}
}

// ---- dispatch ----

#if defined(__x86_64__)
#define ELEM_X86(isa) ((isa) >= EMBER_ISA_AVX2 && (isa) <= EMBER_ISA_AVX512VNNI)
#define ELEM_X512(isa) ((isa) == EMBER_ISA_AVX512 || (isa) == EMBER_ISA_AVX512VNNI)
#endif

void ember_rmsnorm(int isa, const float *x, const float *w, float *y, int64_t n, float eps) {
#if defined(__x86_64__)
	if (ELEM_X86(isa)) { elem_rmsnorm_avx2(x, w, y, n, eps); return; }
#endif
#if defined(__aarch64__)
	if (isa == EMBER_ISA_NEON) { elem_rmsnorm_neon(x, w, y, n, eps); return; }
#endif
	elem_rmsnorm_scalar(x, w, y, n, eps);
}

void ember_add(int isa, const float *a, const float *b, float *y, int64_t n) {
#if defined(__x86_64__)
	if (ELEM_X86(isa)) { elem_binary_avx2(0, a, b, y, n); return; }
#endif
#if defined(__aarch64__)
	if (isa == EMBER_ISA_NEON) { elem_binary_neon(0, a, b, y, n); return; }
#endif
	for (int64_t i = 0; i < n; i++) y[i] = a[i] + b[i];
}

void ember_mul(int isa, const float *a, const float *b, float *y, int64_t n) {
#if defined(__x86_64__)
	if (ELEM_X86(isa)) { elem_binary_avx2(1, a, b, y, n); return; }
#endif
#if defined(__aarch64__)
	if (isa == EMBER_ISA_NEON) { elem_binary_neon(1, a, b, y, n); return; }
#endif
	for (int64_t i = 0; i < n; i++) y[i] = a[i] * b[i];
}

void ember_swiglu(int isa, const float *g, const float *u, float *y, int64_t n) {
#if defined(__x86_64__)
	if (ELEM_X512(isa)) { elem_swiglu_avx512(g, u, y, n); return; }
	if (ELEM_X86(isa)) { elem_swiglu_avx2(g, u, y, n); return; }
#endif
#if defined(__aarch64__)
	if (isa == EMBER_ISA_NEON) { elem_swiglu_neon(g, u, y, n); return; }
#endif
	elem_swiglu_scalar(g, u, y, n);
}

void ember_f32_to_f16(int isa, const float *x, uint16_t *y, int64_t n) {
#if defined(__x86_64__)
	if (ELEM_X86(isa)) { elem_f32_to_f16_avx2(x, y, n); return; }
#endif
#if defined(__aarch64__)
	if (isa == EMBER_ISA_NEON) { elem_f32_to_f16_neon(x, y, n); return; }
#endif
	for (int64_t i = 0; i < n; i++) y[i] = lg_f2h(x[i]);
}

void ember_f16_to_f32(int isa, const uint16_t *x, float *y, int64_t n) {
#if defined(__x86_64__)
	if (ELEM_X86(isa)) { elem_f16_to_f32_avx2(x, y, n); return; }
#endif
#if defined(__aarch64__)
	if (isa == EMBER_ISA_NEON) { elem_f16_to_f32_neon(x, y, n); return; }
#endif
	for (int64_t i = 0; i < n; i++) y[i] = lg_h2f(x[i]);
}

void ember_rope(int isa, float *x, int64_t nheads, int64_t head_dim, int64_t dims, int neox, const float *cs) {
#if defined(__x86_64__)
	if (ELEM_X86(isa)) { elem_rope_avx2(x, nheads, head_dim, dims, neox, cs); return; }
#endif
#if defined(__aarch64__)
	if (isa == EMBER_ISA_NEON) { elem_rope_neon(x, nheads, head_dim, dims, neox, cs); return; }
#endif
	elem_rope_scalar(x, nheads, head_dim, dims, neox, cs);
}

void ember_attention(int isa, const float *q, const uint16_t *k, int64_t k_stride, const uint16_t *v, int64_t v_stride, const int32_t *rows,
                     int64_t n_kv, int64_t head_dim, int64_t v_head_dim, float scale, float *out, float *scratch) {
	if (n_kv <= 0) return;
#if defined(__x86_64__)
	if (ELEM_X512(isa)) { // the AVX2 path's bits
		elem_attention_avx512(q, k, k_stride, v, v_stride, rows, n_kv, head_dim, v_head_dim, scale, out, scratch);
		return;
	}
	if (ELEM_X86(isa)) {
		elem_attention_avx2(q, k, k_stride, v, v_stride, rows, n_kv, head_dim, v_head_dim, scale, out, scratch);
		return;
	}
#endif
#if defined(__aarch64__)
	if (isa == EMBER_ISA_NEON) {
		elem_attention_neon(q, k, k_stride, v, v_stride, rows, n_kv, head_dim, v_head_dim, scale, out, scratch);
		return;
	}
#endif
	elem_attention_scalar(q, k, k_stride, v, v_stride, rows, n_kv, head_dim, v_head_dim, scale, out, scratch);
}
