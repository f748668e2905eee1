// elem_avx512.c: AVX-512 row ops. Of the row ops only SwiGLU (bound by its exp) gains
// from the wider vectors; the other ops are memory-bound and use the AVX2 code. The
// single-head attention over an f16 cache (elem_attention_avx512) has the AVX2 kernel's
// bits on 16-lane vectors (its comment says how).
#include "elem.h"

#if defined(__x86_64__)
#include <immintrin.h> // before the target pragma: its functions carry their own targets
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq"))), apply_to = function)
#else
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq")
#endif
#include "lg_x86.h"
#include "elem_x86.h"
#include "elem_x512.h"

LGA __m512 e5_swiglu16(__m512 g, __m512 u) {
	const __m512 e = e5_exp(_mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(g), _mm512_set1_epi32((int)0x80000000u))));
	return _mm512_mul_ps(_mm512_div_ps(g, _mm512_add_ps(_mm512_set1_ps(1.0f), e)), u);
}

void elem_swiglu_avx512(const float *g, const float *u, float *y, int64_t n) {
	int64_t i = 0;
	for (; i + 32 <= n; i += 32) {
		const __m512 a = e5_swiglu16(_mm512_loadu_ps(g + i), _mm512_loadu_ps(u + i));
		const __m512 b = e5_swiglu16(_mm512_loadu_ps(g + i + 16), _mm512_loadu_ps(u + i + 16));
		_mm512_storeu_ps(y + i, a);
		_mm512_storeu_ps(y + i + 16, b);
	}
	for (; i < n; i += 16) {
		const __mmask16 m = (__mmask16)(n - i >= 16 ? 0xffff : (1u << (n - i)) - 1);
		_mm512_mask_storeu_ps(y + i, m, e5_swiglu16(_mm512_maskz_loadu_ps(m, g + i), _mm512_maskz_loadu_ps(m, u + i)));
	}
}

// elem_softmax_exp_avx2 on 16 lanes: the same max, exps and double sum (the AVX2 kernel's
// chains over lanes 0-3 and 4-7 of each group of 8 are the two halves of one 8-lane
// chain here, fed the groups in the same order).
float elem_softmax_exp_avx512(float *s, int64_t n) {
	__m512 mv = _mm512_set1_ps(-INFINITY);
	int64_t t = 0;
	for (; t + 16 <= n; t += 16) mv = _mm512_max_ps(mv, _mm512_loadu_ps(s + t));
	float m = _mm512_reduce_max_ps(mv);
	for (; t < n; t++)
		if (s[t] > m) m = s[t];
	const __m512 vm = _mm512_set1_ps(m);
	__m512d sd = _mm512_setzero_pd();
	t = 0;
	for (; t + 16 <= n; t += 16) {
		const __m512 e = e5_exp(_mm512_sub_ps(_mm512_loadu_ps(s + t), vm));
		_mm512_storeu_ps(s + t, e);
		sd = _mm512_add_pd(sd, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
		sd = _mm512_add_pd(sd, _mm512_cvtps_pd(_mm512_extractf32x8_ps(e, 1)));
	}
	for (; t < n; t += 8) { // groups of 8, the last padded with exp(-inf) = 0
		const int64_t r = n - t < 8 ? n - t : 8;
		const __mmask16 k = (__mmask16)((1u << r) - 1);
		const __m512 e = e5_exp(_mm512_sub_ps(_mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), k, s + t), vm));
		_mm512_mask_storeu_ps(s + t, k, e);
		sd = _mm512_add_pd(sd, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
	}
	const __m256d s4 = _mm256_add_pd(_mm512_castpd512_pd256(sd), _mm512_extractf64x4_pd(sd, 1));
	const __m128d h2 = _mm_add_pd(_mm256_castpd256_pd128(s4), _mm256_extractf128_pd(s4, 1));
	const double sum = _mm_cvtsd_f64(_mm_add_sd(h2, _mm_unpackhi_pd(h2, h2)));
	return (float)(1.0 / sum);
}

// ---- single-head attention (elem_attention_avx2's bits) ----
//
// Scores: at a position of a block of four, the AVX2 kernel sums the dot in two 8-lane
// chains, a over elements 16j..16j+7 (and the odd step of 8) and b over 16j+8..16j+15
// (and the last hd % 8, zero-padded), then a + b and lga_hsum8's tree. Here one 16-lane
// chain holds both (lanes 0-7 a, 8-15 b; the odd step and the tail by masked FMAs), its
// halves added before the same tree. Two blocks go at a time (8 chains in flight; a
// block's sums do not depend on its neighbour: lga_hsum8 reduces each input in its own
// lane). Positions past the blocks take the AVX2 kernel's one 8-lane chain.
//
// Softmax: elem_softmax_exp_avx512 (the AVX2 bits); p rounded to f16 element-wise.
//
// V: every column's sum is one FMA chain over the positions in order, started at 0:
// 128 columns a pass (8 accumulators), the last vhd % 16 by masked loads and stores. Long
// heads prefetch their V rows ELEM_KPF positions ahead (the AVX2 kernel does not).

// The dots of q16 (qt: its last hd % 8 elements, zero-padded, in lanes 8-15) with the P
// rows kr, as the AVX2 kernel's a + b, into h[0..P).
LGA void e5_dots(const int P, const float *q16, int64_t hd, __m512 qt, const uint16_t *const *kr, __m256 *h) {
	const int64_t hd8 = hd & ~(int64_t)7, hrem = hd - hd8;
	__m512 acc[8];
	LG_UNROLL
	for (int p = 0; p < P; p++) acc[p] = _mm512_setzero_ps();
	int64_t d = 0;
	for (; d + 16 <= hd8; d += 16) {
		const __m512 qv = _mm512_loadu_ps(q16 + d);
		LG_UNROLL
		for (int p = 0; p < P; p++)
			acc[p] = _mm512_fmadd_ps(qv, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(kr[p] + d))), acc[p]);
	}
	if (d < hd8) { // one step of 8 left: chain a
		const __m512 qv = _mm512_zextps256_ps512(_mm256_loadu_ps(q16 + d));
		LG_UNROLL
		for (int p = 0; p < P; p++)
			acc[p] = _mm512_mask3_fmadd_ps(qv, _mm512_zextps256_ps512(ea_load16(kr[p] + d)), acc[p], 0x00ff);
	}
	if (hrem) { // the last hd % 8 elements: chain b, the padding's zeros included
		LG_UNROLL
		for (int p = 0; p < P; p++) {
			const __m512 k = _mm512_insertf32x8(_mm512_setzero_ps(), ea_load16_part(kr[p] + hd8, hrem), 1);
			acc[p] = _mm512_mask3_fmadd_ps(qt, k, acc[p], 0xff00);
		}
	}
	LG_UNROLL
	for (int p = 0; p < P; p++) h[p] = _mm256_add_ps(_mm512_castps512_ps256(acc[p]), _mm512_extractf32x8_ps(acc[p], 1));
}

// out[16w ..] = sum_t p[t] v_t[16w ..] for w < W (v and out start at the pass's column);
// with pf, the pass's part of the row ELEM_KPF positions on is prefetched.
LGA void e5_v_pass(const int W, const float *s, int64_t n_kv, const uint16_t *v, int64_t v_stride,
                   const int32_t *rows, float *out, int pf) {
	__m512 acc[8];
	LG_UNROLL
	for (int w = 0; w < W; w++) acc[w] = _mm512_setzero_ps();
	for (int64_t t = 0; t < n_kv; t++) {
		const __m512 p = _mm512_set1_ps(s[t]);
		const uint16_t *vt = v + EROW(rows, t) * v_stride;
		if (pf && t + ELEM_KPF < n_kv) elem_prefetch(v + EROW(rows, t + ELEM_KPF) * v_stride, 32 * W);
		LG_UNROLL
		for (int w = 0; w < W; w++)
			acc[w] = _mm512_fmadd_ps(p, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(vt + 16 * w))), acc[w]);
	}
	LG_UNROLL
	for (int w = 0; w < W; w++) _mm512_storeu_ps(out + 16 * w, acc[w]);
}

void elem_attention_avx512(const float *q, const uint16_t *k, int64_t k_stride, const uint16_t *v, int64_t v_stride,
                           const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim, float scale,
                           float *out, float *scratch) {
	float *s = scratch, *q16 = scratch + n_kv;
	const int64_t hd8 = head_dim & ~(int64_t)7, hrem = head_dim - hd8;
	int64_t d = 0;
	for (; d + 16 <= hd8; d += 16)
		_mm512_storeu_ps(q16 + d, _mm512_cvtph_ps(_mm512_cvtps_ph(_mm512_loadu_ps(q + d), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
	for (; d < hd8; d += 8) _mm256_storeu_ps(q16 + d, ea_round16(_mm256_loadu_ps(q + d)));
	for (; d < head_dim; d++) q16[d] = lg_h2f(lg_f2h(q[d]));
	float qb[16] = {0}; // the last head_dim % 8 elements of q, zero-padded, in lanes 8-15
	memcpy(qb + 8, q16 + hd8, (size_t)hrem * 4);
	const __m512 qt = _mm512_loadu_ps(qb);

	// scores: blocks of four positions, two at a time, then one position at a time
	const int64_t nb = n_kv & ~(int64_t)3, kbytes = 2 * head_dim;
	const __m256 vs = _mm256_set1_ps(scale);
	int64_t t = 0;
	for (; t + 8 <= nb; t += 8) {
		const uint16_t *kr[8];
		for (int j = 0; j < 8; j++) kr[j] = k + EROW(rows, t + j) * k_stride;
		elem_prefetch_k(t, n_kv, rows, k, k_stride, kbytes); // a decode row's cache is cold
		elem_prefetch_k(t + 4, n_kv, rows, k, k_stride, kbytes);
		__m256 h[8];
		e5_dots(8, q16, head_dim, qt, kr, h);
		_mm256_storeu_ps(s + t, _mm256_mul_ps(lga_hsum8(h), vs)); // lanes 0-3 the first block, 4-7 the second
	}
	if (t + 4 <= nb) {
		const uint16_t *kr[4];
		for (int j = 0; j < 4; j++) kr[j] = k + EROW(rows, t + j) * k_stride;
		elem_prefetch_k(t, n_kv, rows, k, k_stride, kbytes);
		__m256 h[8];
		e5_dots(4, q16, head_dim, qt, kr, h);
		for (int j = 4; j < 8; j++) h[j] = _mm256_setzero_ps();
		_mm_storeu_ps(s + t, _mm_mul_ps(_mm256_castps256_ps128(lga_hsum8(h)), _mm_set1_ps(scale)));
		t += 4;
	}
	const __m256 qt8 = _mm512_extractf32x8_ps(qt, 1);
	for (; t < n_kv; t++) s[t] = ea_score1(q16, qt8, k + EROW(rows, t) * k_stride, hd8, hrem, scale);

	// softmax: max, exp, sum in double, p rounded to f16
	const float inv = elem_softmax_exp_avx512(s, n_kv);
	const __m512 vinv = _mm512_set1_ps(inv);
	const int64_t n8 = n_kv & ~(int64_t)7;
	t = 0;
	for (; t + 16 <= n8; t += 16)
		_mm512_storeu_ps(s + t, _mm512_cvtph_ps(_mm512_cvtps_ph(_mm512_mul_ps(_mm512_loadu_ps(s + t), vinv),
		                                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
	ea_probs_f16(s, t, n_kv, inv);

	// out = sum_t p_t v_t; the V rows prefetched ahead when the head's V is past 256 KiB
	// (BenchmarkElemAttentionSizes, 8 heads: nkv=16384 hd=64 ~230-245 us against ~260-320
	// without; at nkv=512 the warm rows lose ~10-30% to it)
	const int64_t vd16 = v_head_dim & ~(int64_t)15;
	const int pf = n_kv * 2 * v_head_dim >= 262144;
	for (int64_t d0 = 0; d0 < vd16; d0 += 128) {
		switch ((vd16 - d0) / 16 < 8 ? (int)((vd16 - d0) / 16) : 8) {
#define E5_V(w) \
	case w: e5_v_pass(w, s, n_kv, v + d0, v_stride, rows, out + d0, pf); break;
			E5_V(8) E5_V(7) E5_V(6) E5_V(5) E5_V(4) E5_V(3) E5_V(2) E5_V(1)
#undef E5_V
		}
	}
	if (vd16 < v_head_dim) {
		const __mmask16 m = (__mmask16)((1u << (v_head_dim - vd16)) - 1);
		__m512 acc = _mm512_setzero_ps();
		for (t = 0; t < n_kv; t++)
			acc = _mm512_fmadd_ps(_mm512_set1_ps(s[t]),
			                      _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, v + EROW(rows, t) * v_stride + vd16)), acc);
		_mm512_mask_storeu_ps(out + vd16, m, acc);
	}
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
