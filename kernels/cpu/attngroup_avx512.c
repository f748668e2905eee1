// attngroup_avx512.c: AVX-512 attention of the g query heads of one KV head over an f16
// cache, with the bits of the AVX2 kernels (attngroup_avx2.c, whose comment describes the
// order of every sum) on 16-lane vectors:
//
// Scores: the AVX2 kernel sums a head's dot with a position of a block in two 8-lane
// chains, a over elements 16j..16j+7 and b over 16j+8..16j+15, then a + b. Here one
// 16-lane chain holds both (lanes 0-7 are a, 8-15 are b), the odd step of 8 goes to the
// low lanes and the last hd % 8 elements to the high lanes by masked FMAs, and the low
// and high halves are added before the same horizontal sums. Tiles of up to four
// positions by four heads (16 chains) share the loads of the K rows; positions outside
// the blocks of four go to the AVX2 kernel.
//
// Softmax: e5_exp's exps are ea_exp's (elem_x512.h), and their double sum keeps the AVX2
// kernel's two 4-lane chains as the halves of one 8-lane one.
//
// V: every column's sum is the same FMA chain over the positions in order; 16 columns a
// vector, up to 16 accumulators (H heads by W vectors) a tile. Columns past the last
// whole 16 go to the AVX2 kernel.
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

// The dot products of P positions (rows kr[0..P)) with H heads (q16, heads hd floats
// apart; qt[i] head i's last hd % 8 elements, zero-padded, in lanes 8-15) as the AVX2
// kernel's a + b: h[i*4 + p] for head i and position p.
LGA void a5_score_tile(const int P, const int H, const float *q16, int64_t hd, const __m512 *qt,
                       const uint16_t *const *kr, __m256 *h) {
	const int64_t hd8 = hd & ~(int64_t)7, hrem = hd - hd8;
	__m512 acc[16];
	LG_UNROLL
	for (int j = 0; j < 16; j++) acc[j] = _mm512_setzero_ps();
	int64_t d = 0;
	for (; d + 16 <= hd8; d += 16) {
		LG_UNROLL
		for (int p = 0; p < P; p++) {
			const __m512 k = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(kr[p] + d)));
			LG_UNROLL
			for (int i = 0; i < H; i++) acc[i * P + p] = _mm512_fmadd_ps(_mm512_loadu_ps(q16 + i * hd + d), k, acc[i * P + p]);
		}
	}
	if (d < hd8) { // one step of 8 left: chain a
		LG_UNROLL
		for (int p = 0; p < P; p++) {
			const __m512 k = _mm512_zextps256_ps512(ea_load16(kr[p] + d));
			LG_UNROLL
			for (int i = 0; i < H; i++)
				acc[i * P + p] = _mm512_mask3_fmadd_ps(_mm512_zextps256_ps512(_mm256_loadu_ps(q16 + i * hd + d)), k,
				                                       acc[i * P + p], 0x00ff);
		}
	}
	if (hrem) { // the last hd % 8 elements: chain b, the padding's zeros included
		LG_UNROLL
		for (int p = 0; p < P; p++) {
			const __m512 k = _mm512_insertf32x8(_mm512_setzero_ps(), ea_load16_part(kr[p] + hd8, hrem), 1);
			LG_UNROLL
			for (int i = 0; i < H; i++) acc[i * P + p] = _mm512_mask3_fmadd_ps(qt[i], k, acc[i * P + p], 0xff00);
		}
	}
	LG_UNROLL
	for (int i = 0; i < H; i++) {
		LG_UNROLL
		for (int p = 0; p < P; p++)
			h[i * 4 + p] = _mm256_add_ps(_mm512_castps512_ps256(acc[i * P + p]), _mm512_extractf32x8_ps(acc[i * P + p], 1));
	}
}

// The scaled scores of g <= EMBER_GQA_MAX heads at the four positions of a block (rows kr)
// into s[0..4) of each head (heads n_kv floats apart): four heads at a time, then the rest.
static void a5_scores4(int64_t g, const float *q16, int64_t hd, const __m512 *qt, const uint16_t *const *kr,
                       float scale, float *s, int64_t n_kv) {
	__m256 h[4 * EMBER_GQA_MAX + 4];
	int64_t i = 0;
	for (; i + 4 <= g; i += 4) a5_score_tile(4, 4, q16 + i * hd, hd, qt + i, kr, h + i * 4);
	switch (g - i) {
	case 3: a5_score_tile(4, 3, q16 + i * hd, hd, qt + i, kr, h + i * 4); break;
	case 2: a5_score_tile(4, 2, q16 + i * hd, hd, qt + i, kr, h + i * 4); break;
	case 1: a5_score_tile(4, 1, q16 + i * hd, hd, qt + i, kr, h + i * 4); break;
	}
	ea_scores_store(g, h, scale, s, n_kv);
}

void attn_scores_avx512(const float *q16, int64_t g, const uint16_t *k, int64_t k_stride, const int32_t *rows,
                        int64_t t0, int64_t t1, int64_t n_kv, int64_t hd, float scale, float *s, const uint16_t *v,
                        int64_t v_bstride, int64_t vbytes) {
	const int64_t hd8 = hd & ~(int64_t)7, hrem = hd - hd8, nb = n_kv & ~(int64_t)3;
	__m512 qt[EMBER_ATTN_SPLIT_MAX]; // the last hd % 8 elements of each head, zero-padded, in lanes 8-15
	for (int64_t i = 0; i < g; i++) {
		float b[16] = {0};
		memcpy(b + 8, q16 + i * hd + hd8, (size_t)hrem * 4);
		qt[i] = _mm512_loadu_ps(b);
	}
	int64_t t = t0;
	for (; t + 4 <= t1 && t + 4 <= nb; t += 4) { // whole blocks of four, as in a single-head call
		const uint16_t *kr[4];
		for (int j = 0; j < 4; j++) kr[j] = k + EROW(rows, t + j) * k_stride;
		if (v) elem_prefetch_run(t, 4, n_kv, rows, v, v_bstride, vbytes);
		elem_prefetch_k(t, t1, rows, k, k_stride, 2 * hd); // a decode row's cache is cold
		for (int64_t i = 0; i < g; i += EMBER_GQA_MAX) {
			const int64_t gi = g - i < EMBER_GQA_MAX ? g - i : EMBER_GQA_MAX;
			a5_scores4(gi, q16 + i * hd, hd, qt + i, kr, scale, s + i * n_kv + t, n_kv);
		}
	}
	if (t < t1) attn_scores_avx2(q16, g, k, k_stride, rows, t, t1, n_kv, hd, scale, s, 0, 0, 0);
}

void attn_probs_avx512(float *s, int64_t n_kv) { // max, exp, sum in double, p rounded to f16
	const float inv = elem_softmax_exp_avx512(s, n_kv);
	const __m512 vinv = _mm512_set1_ps(inv);
	int64_t t = 0;
	for (; t + 16 <= n_kv; t += 16)
		_mm512_storeu_ps(s + t, _mm512_cvtph_ps(_mm512_cvtps_ph(_mm512_mul_ps(_mm512_loadu_ps(s + t), vinv),
		                                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
	for (; t < n_kv; t++) s[t] = lg_h2f(lg_f2h(s[t] * inv));
}

// out[i*vhd + 16w ..] += p_i[t] * v_t[16w ..] for the positions t in [t0, t1), heads i < H
// (p_i = s + i*n_kv) and column vectors w < W; v and out start at the tile's column.
LGA void a5_v_tile(const int H, const int W, const float *s, int64_t n_kv, const uint16_t *v, int64_t v_stride,
                   const int32_t *rows, int64_t t0, int64_t t1, float *out, int64_t vhd, int64_t pf, int64_t pfb) {
	__m512 acc[16];
	LG_UNROLL
	for (int i = 0; i < H; i++) {
		LG_UNROLL
		for (int w = 0; w < W; w++) acc[i * W + w] = _mm512_loadu_ps(out + i * vhd + 16 * w);
	}
	for (int64_t t = t0; t < t1; t++) {
		const uint16_t *vt = v + EROW(rows, t) * v_stride;
		if (pf && t + pf < n_kv) elem_prefetch(v + EROW(rows, t + pf) * v_stride, pfb); // the next run
		__m512 p[4];
		LG_UNROLL
		for (int i = 0; i < H; i++) p[i] = _mm512_set1_ps(s[i * n_kv + t]);
		LG_UNROLL
		for (int w = 0; w < W; w++) {
			const __m512 x = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(vt + 16 * w)));
			LG_UNROLL
			for (int i = 0; i < H; i++) acc[i * W + w] = _mm512_fmadd_ps(p[i], x, acc[i * W + w]);
		}
	}
	LG_UNROLL
	for (int i = 0; i < H; i++) {
		LG_UNROLL
		for (int w = 0; w < W; w++) _mm512_storeu_ps(out + i * vhd + 16 * w, acc[i * W + w]);
	}
}

// a5_v_tile over nvec 16-column vectors (from v and out) for H <= 4 heads (out heads
// ostride floats apart): 16W columns at a time, W the widest that fits (H*W <= 16); the
// first tile prefetches the next run's pfb bytes of each row.
static void a5_v_cols(int H, const float *s, int64_t n_kv, const uint16_t *v, int64_t v_stride, const int32_t *rows,
                      int64_t t0, int64_t t1, float *out, int64_t ostride, int64_t nvec, int64_t pf, int64_t pfb) {
	const int wmax = H <= 2 ? 8 : 4;
	for (int64_t c = 0; c < nvec;) {
		int W = wmax;
		while (W > nvec - c) W /= 2;
		const uint16_t *vc = v + 16 * c;
		float *oc = out + 16 * c;
		switch (H * 16 + W) {
#define A5_V(h, w) \
	case h * 16 + w: a5_v_tile(h, w, s, n_kv, vc, v_stride, rows, t0, t1, oc, ostride, c ? 0 : pf, pfb); break;
			A5_V(1, 8) A5_V(1, 4) A5_V(1, 2) A5_V(1, 1) A5_V(2, 8) A5_V(2, 4) A5_V(2, 2) A5_V(2, 1)
			A5_V(3, 4) A5_V(3, 2) A5_V(3, 1) A5_V(4, 4) A5_V(4, 2) A5_V(4, 1)
#undef A5_V
		}
		c += W;
	}
}

void attn_values_avx512(const float *s, int64_t g, int64_t n_kv, const uint16_t *v, int64_t v_stride,
                        const int32_t *rows, int64_t vhd, int64_t c0, int64_t c1, float *out, int64_t ostride) {
	const int64_t vd8 = vhd & ~(int64_t)7, e1 = c1 < vd8 ? c1 : vd8, nvec = (e1 - c0) / 16, c16 = c0 + 16 * nvec;
	if (nvec > 0) {
		const int64_t n = elem_run(2 * vhd), pfb = 2 * (c16 - c0);
		for (int64_t i = 0; i < g; i++) memset(out + i * ostride + c0, 0, (size_t)(c16 - c0) * 4);
		// runs of positions (16 KiB of V), heads four at a time
		for (int64_t t0 = 0; t0 < n_kv; t0 += n) {
			const int64_t t1 = t0 + n < n_kv ? t0 + n : n_kv;
			for (int64_t i = 0; i < g; i += 4)
				a5_v_cols((int)(g - i < 4 ? g - i : 4), s + i * n_kv, n_kv, v + c0, v_stride, rows, t0, t1,
				          out + i * ostride + c0, ostride, nvec, i ? 0 : n, pfb);
		}
	}
	if (c16 < c1) attn_values_avx2(s, g, n_kv, v, v_stride, rows, vhd, c16, c1, out, ostride);
}

void attn_group_avx512(const float *q, int64_t g, const uint16_t *k, int64_t k_stride, const uint16_t *v,
                       int64_t v_stride, const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim,
                       float scale, float *out, float *scratch) {
	float *s = scratch, *q16 = scratch + g * n_kv;
	attn_q16_avx2(q, g * head_dim, q16);
	attn_scores_avx512(q16, g, k, k_stride, rows, 0, n_kv, n_kv, head_dim, scale, s, v, 2 * v_stride, 2 * v_head_dim);
	for (int64_t i = 0; i < g; i++) attn_probs_avx512(s + i * n_kv, n_kv);
	attn_values_avx512(s, g, n_kv, v, v_stride, rows, v_head_dim, 0, v_head_dim, out, v_head_dim);
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
