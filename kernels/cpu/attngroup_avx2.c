// attngroup_avx2.c: AVX2 + FMA + F16C attention of the g query heads of one KV head over
// an f16 cache (see attngroup.c for the scalar reference and the scratch layout). Each
// K and V row is read from memory once for all g heads, and every head gets the bits of
// the single-head kernel (elem_attention_avx2):
//
// Scores run over blocks of four positions and then one position at a time, as in a
// single-head call (a position's sum depends on which of the two it falls in). In a
// block, head h's dot with position p is two 8-lane FMA chains over its 16-element
// steps, (first half + second half) reduced by lga_hsum8's tree; at a single position,
// one chain over 8-element steps reduced by lga_hsum's. Tiles of P positions by H heads
// (P*H = 4: 8 chains in registers) share the loads and conversions of the K rows.
//
// V: every column's sum is one FMA chain over the positions in order, started at 0. The
// positions go in runs of about 16 KiB of V (elem_run: they stay in L1 or L2, and the
// next run is prefetched); in each run the columns go 8W at a time for up to 4 heads at
// once (H*W <= 8 accumulators), the accumulators carried between runs in out.
#include "elem.h"

#if defined(__x86_64__)
#include <immintrin.h> // before the target pragma: its functions carry their own targets
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC target("avx2,fma,f16c")
#endif
#include "lg_x86.h"
#include "elem_x86.h"

// The dot products of P positions (rows kr[0..P)) of a block with H heads (q16, heads
// hd floats apart; qt their zero-padded last hd % 8 elements) before the horizontal sum:
// h[i*4 + p] for head i and position p.
LGA void ag_score_tile(const int P, const int H, const float *q16, int64_t hd, const __m256 *qt,
                       const uint16_t *const *kr, __m256 *h) {
	const int64_t hd8 = hd & ~(int64_t)7, hrem = hd - hd8;
	__m256 a[4], b[4];
	LG_UNROLL
	for (int j = 0; j < 4; j++) a[j] = b[j] = _mm256_setzero_ps();
	int64_t d = 0;
	for (; d + 16 <= hd8; d += 16) {
		LG_UNROLL
		for (int p = 0; p < P; p++) {
			const __m256 k0 = ea_load16(kr[p] + d), k1 = ea_load16(kr[p] + d + 8);
			LG_UNROLL
			for (int i = 0; i < H; i++) {
				a[i * P + p] = _mm256_fmadd_ps(_mm256_loadu_ps(q16 + i * hd + d), k0, a[i * P + p]);
				b[i * P + p] = _mm256_fmadd_ps(_mm256_loadu_ps(q16 + i * hd + d + 8), k1, b[i * P + p]);
			}
		}
	}
	if (d < hd8) { // one step of 8 left: into the first chain
		LG_UNROLL
		for (int p = 0; p < P; p++) {
			const __m256 k0 = ea_load16(kr[p] + d);
			LG_UNROLL
			for (int i = 0; i < H; i++) a[i * P + p] = _mm256_fmadd_ps(_mm256_loadu_ps(q16 + i * hd + d), k0, a[i * P + p]);
		}
	}
	if (hrem) { // the last hd % 8 elements: into the second
		LG_UNROLL
		for (int p = 0; p < P; p++) {
			const __m256 k0 = ea_load16_part(kr[p] + hd8, hrem);
			LG_UNROLL
			for (int i = 0; i < H; i++) b[i * P + p] = _mm256_fmadd_ps(qt[i], k0, b[i * P + p]);
		}
	}
	LG_UNROLL
	for (int i = 0; i < H; i++) {
		LG_UNROLL
		for (int p = 0; p < P; p++) h[i * 4 + p] = _mm256_add_ps(a[i * P + p], b[i * P + p]);
	}
}

// The scaled scores of the g heads at the four positions of a block (rows kr) into s[0..4)
// of each head (heads n_kv floats apart): two heads by two positions at a time, which
// touches the rows of the block early (what a cold cache wants), then the odd head.
static void ag_scores4(int64_t g, const float *q16, int64_t hd, const __m256 *qt, const uint16_t *const *kr,
                       float scale, float *s, int64_t n_kv) {
	__m256 h[4 * EMBER_GQA_MAX + 4];
	int64_t i = 0;
	for (; i + 2 <= g; i += 2) {
		ag_score_tile(2, 2, q16 + i * hd, hd, qt + i, kr, h + i * 4);
		ag_score_tile(2, 2, q16 + i * hd, hd, qt + i, kr + 2, h + i * 4 + 2);
	}
	if (i < g) ag_score_tile(4, 1, q16 + i * hd, hd, qt + i, kr, h + i * 4);
	ea_scores_store(g, h, scale, s, n_kv);
}

// The scaled scores of the g heads at a position outside the blocks (row kt) into s[0]
// of each head.
static void ag_score1(int64_t g, const float *q16, int64_t hd, const __m256 *qt, const uint16_t *kt, float scale,
                      float *s, int64_t n_kv) {
	const int64_t hd8 = hd & ~(int64_t)7, hrem = hd - hd8;
	__m256 a[EMBER_GQA_MAX];
	for (int64_t i = 0; i < g; i++) a[i] = _mm256_setzero_ps();
	for (int64_t d = 0; d < hd8; d += 8) {
		const __m256 x = ea_load16(kt + d);
		for (int64_t i = 0; i < g; i++) a[i] = _mm256_fmadd_ps(_mm256_loadu_ps(q16 + i * hd + d), x, a[i]);
	}
	if (hrem) {
		const __m256 x = ea_load16_part(kt + hd8, hrem);
		for (int64_t i = 0; i < g; i++) a[i] = _mm256_fmadd_ps(qt[i], x, a[i]);
	}
	for (int64_t i = 0; i < g; i++) s[i * n_kv] = scale * lga_hsum(a[i]);
}

// out[i*vhd + 8w ..] += p_i[t] * v_t[8w ..] for the positions t in [t0, t1), heads i < H
// (p_i = s + i*n_kv) and column vectors w < W; v and out start at the tile's column.
LGA void ag_v_tile(const int H, const int W, const float *s, int64_t n_kv, const uint16_t *v, int64_t v_stride,
                   const int32_t *rows, int64_t t0, int64_t t1, float *out, int64_t vhd, int64_t pf, int64_t pfb) {
	__m256 acc[8];
	ea_tile_load(H, W, acc, out, vhd);
	for (int64_t t = t0; t < t1; t++) {
		const uint16_t *vt = v + EROW(rows, t) * v_stride;
		if (pf && t + pf < n_kv) elem_prefetch(v + EROW(rows, t + pf) * v_stride, pfb); // the next run
		__m256 p[4];
		LG_UNROLL
		for (int i = 0; i < H; i++) p[i] = _mm256_broadcast_ss(s + i * n_kv + t);
		LG_UNROLL
		for (int w = 0; w < W; w++) {
			const __m256 x = ea_load16(vt + 8 * w);
			LG_UNROLL
			for (int i = 0; i < H; i++) acc[i * W + w] = _mm256_fmadd_ps(p[i], x, acc[i * W + w]);
		}
	}
	ea_tile_store(H, W, acc, out, vhd);
}

// ag_v_tile over nvec column vectors (from v and out) for H <= 4 heads (out heads ostride
// floats apart): 8W columns at a time, W the widest that fits (H*W <= 8); the first tile
// prefetches the next run's pfb bytes of each row.
static void ag_v_cols(int H, const float *s, int64_t n_kv, const uint16_t *v, int64_t v_stride, const int32_t *rows,
                      int64_t t0, int64_t t1, float *out, int64_t ostride, int64_t nvec, int64_t pf, int64_t pfb) {
	const int wmax = H == 1 ? 8 : H == 2 ? 4 : 2;
	for (int64_t c = 0; c < nvec;) {
		int W = wmax;
		while (W > nvec - c) W /= 2;
		const uint16_t *vc = v + 8 * c;
		float *oc = out + 8 * c;
		switch (H * 16 + W) {
#define AG_V(h, w) \
	case h * 16 + w: ag_v_tile(h, w, s, n_kv, vc, v_stride, rows, t0, t1, oc, ostride, c ? 0 : pf, pfb); break;
			AG_V(1, 8) AG_V(1, 4) AG_V(1, 2) AG_V(1, 1) AG_V(2, 4) AG_V(2, 2) AG_V(2, 1)
			AG_V(3, 2) AG_V(3, 1) AG_V(4, 2) AG_V(4, 1)
#undef AG_V
		}
		c += W;
	}
}

void attn_q16_avx2(const float *q, int64_t n, float *q16) {
	int64_t d = 0;
	for (; d + 8 <= n; d += 8) _mm256_storeu_ps(q16 + d, ea_round16(_mm256_loadu_ps(q + d)));
	for (; d < n; d++) q16[d] = lg_h2f(lg_f2h(q[d]));
}

void attn_scores_avx2(const float *q16, int64_t g, const uint16_t *k, int64_t k_stride, const int32_t *rows,
                      int64_t t0, int64_t t1, int64_t n_kv, int64_t hd, float scale, float *s, const uint16_t *v,
                      int64_t v_bstride, int64_t vbytes) {
	const int64_t hd8 = hd & ~(int64_t)7, hrem = hd - hd8, nb = n_kv & ~(int64_t)3;
	__m256 qt[EMBER_ATTN_SPLIT_MAX]; // the last hd % 8 elements of each head, zero-padded
	for (int64_t i = 0; i < g; i++) {
		float b[8] = {0};
		memcpy(b, q16 + i * hd + hd8, (size_t)hrem * 4);
		qt[i] = _mm256_loadu_ps(b);
	}
	int64_t t = t0;
	for (; t + 4 <= t1 && t + 4 <= nb; t += 4) { // whole blocks of four, as in a single-head call
		const uint16_t *kr[4];
		for (int j = 0; j < 4; j++) kr[j] = k + EROW(rows, t + j) * k_stride;
		if (v) elem_prefetch_run(t, 4, n_kv, rows, v, v_bstride, vbytes);
		elem_prefetch_k(t, t1, rows, k, k_stride, 2 * hd); // a decode row's cache is cold
		for (int64_t i = 0; i < g; i += EMBER_GQA_MAX) {
			const int64_t gi = g - i < EMBER_GQA_MAX ? g - i : EMBER_GQA_MAX;
			ag_scores4(gi, q16 + i * hd, hd, qt + i, kr, scale, s + i * n_kv + t, n_kv);
		}
	}
	for (; t < t1; t++)
		for (int64_t i = 0; i < g; i += EMBER_GQA_MAX) {
			const int64_t gi = g - i < EMBER_GQA_MAX ? g - i : EMBER_GQA_MAX;
			ag_score1(gi, q16 + i * hd, hd, qt + i, k + EROW(rows, t) * k_stride, scale, s + i * n_kv + t, n_kv);
		}
}

void attn_probs_avx2(float *s, int64_t n_kv) { // max, exp, sum in double, p rounded to f16
	const float inv = elem_softmax_exp_avx2(s, n_kv);
	const __m256 vinv = _mm256_set1_ps(inv);
	int64_t t = 0;
	for (; t + 8 <= n_kv; t += 8) _mm256_storeu_ps(s + t, ea_round16(_mm256_mul_ps(_mm256_loadu_ps(s + t), vinv)));
	for (; t < n_kv; t++) s[t] = lg_h2f(lg_f2h(s[t] * inv));
}

void attn_values_avx2(const float *s, int64_t g, int64_t n_kv, const uint16_t *v, int64_t v_stride,
                      const int32_t *rows, int64_t vhd, int64_t c0, int64_t c1, float *out, int64_t ostride) {
	const int64_t vd8 = vhd & ~(int64_t)7, e1 = c1 < vd8 ? c1 : vd8, nvec = (e1 - c0) / 8;
	const int64_t n = elem_run(2 * vhd), pfb = 2 * (e1 - c0);
	for (int64_t i = 0; i < g; i++) memset(out + i * ostride + c0, 0, (size_t)(c1 - c0) * 4);
	// runs of positions (16 KiB of V), heads four at a time
	for (int64_t t0 = 0; nvec > 0 && t0 < n_kv; t0 += n) {
		const int64_t t1 = t0 + n < n_kv ? t0 + n : n_kv;
		for (int64_t i = 0; i < g; i += 4)
			ag_v_cols((int)(g - i < 4 ? g - i : 4), s + i * n_kv, n_kv, v + c0, v_stride, rows, t0, t1,
			          out + i * ostride + c0, ostride, nvec, i ? 0 : n, pfb);
	}
	if (c1 > vd8) { // the last vhd % 8 columns
		const int64_t r = vhd - vd8;
		__m256 acc[EMBER_ATTN_SPLIT_MAX];
		for (int64_t i = 0; i < g; i++) acc[i] = _mm256_setzero_ps();
		for (int64_t t = 0; t < n_kv; t++) {
			const __m256 x = ea_load16_part(v + EROW(rows, t) * v_stride + vd8, r);
			for (int64_t i = 0; i < g; i++) acc[i] = _mm256_fmadd_ps(_mm256_broadcast_ss(s + i * n_kv + t), x, acc[i]);
		}
		for (int64_t i = 0; i < g; i++) {
			float b[8];
			_mm256_storeu_ps(b, acc[i]);
			memcpy(out + i * ostride + vd8, b, (size_t)r * 4);
		}
	}
}

void attn_group_avx2(const float *q, int64_t g, const uint16_t *k, int64_t k_stride, const uint16_t *v,
                     int64_t v_stride, const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim,
                     float scale, float *out, float *scratch) {
	float *s = scratch, *q16 = scratch + g * n_kv;
	attn_q16_avx2(q, g * head_dim, q16);
	attn_scores_avx2(q16, g, k, k_stride, rows, 0, n_kv, n_kv, head_dim, scale, s, v, 2 * v_stride, 2 * v_head_dim);
	for (int64_t i = 0; i < g; i++) attn_probs_avx2(s + i * n_kv, n_kv);
	attn_values_avx2(s, g, n_kv, v, v_stride, rows, v_head_dim, 0, v_head_dim, out, v_head_dim);
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
