// attnq8_avx2.c: AVX2 + FMA + F16C attention over a Q8_0 KV cache (see attnq8.c for the
// scalar reference and the scratch layout).
//
// Scores: the int8 dot of a block as llama.cpp's AVX2 vec_dot_q8_0_q8_0 (sign trick: |k|
// times q with k's sign through maddubs, pairs summed by madd), converted to float and
// FMAed with dK*dQ into 8 lanes per position, 8 positions at a time. V: 64 columns (two
// blocks) in registers over all positions, 8 int8 widened to float at a time and FMAed
// with p*dV. Float sums run in a different order than the scalar path. The score loops
// prefetch the K rows ELEM_KPF positions ahead (aq8_prefetch_k, attnq8.h).
#include "elem.h"
#include "attnq8.h"

#if defined(__x86_64__)
#include <immintrin.h> // before the target pragma: its functions carry their own targets
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC target("avx2,fma,f16c")
#endif
#include "lg_x86.h"
#include "elem_x86.h"

// The f16 at p, widened, in all 8 lanes.
LGA __m256 aq8_scale8(const uint8_t *p) { return _mm256_cvtph_ps(_mm_set1_epi16((short)lg_rd16(p))); }

// The 8 int32 sums of 4 products of the signed bytes x and y, as floats (the sign trick:
// maddubs takes an unsigned first operand), given ax = |x|.
LGA __m256 aq8_dot_ax(__m256i ax, __m256i x, __m256i y) {
	return _mm256_cvtepi32_ps(_mm256_madd_epi16(_mm256_maddubs_epi16(ax, _mm256_sign_epi8(y, x)), _mm256_set1_epi16(1)));
}

LGA __m256 aq8_dot(__m256i x, __m256i y) { return aq8_dot_ax(_mm256_sign_epi8(x, x), x, y); }

// 8 int8 at p widened to float.
LGA __m256 aq8_widen8(const uint8_t *p) { return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p))); }

void attnq8_avx2(const float *q, const uint8_t *k, int64_t k_stride, const uint8_t *v, int64_t v_stride,
                 const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim, float scale,
                 float *out, float *scratch) {
	const int64_t nb = head_dim / LG_QK, nbv = v_head_dim / LG_QK;
	const aq8_scratch sc = attnq8_prepare(q, 1, n_kv, head_dim, scratch);
	float *s = sc.s;
	const float *dq = sc.dq;
	const int8_t *qq = sc.qq;

	// scores, eight positions at a time
	const __m256 vscale = _mm256_set1_ps(scale);
	int64_t t = 0;
	for (; t + 8 <= n_kv; t += 8) {
		const uint8_t *kr[8];
		__m256 a[8];
		LG_UNROLL
		for (int j = 0; j < 8; j++) {
			kr[j] = k + EROW(rows, t + j) * k_stride;
			a[j] = _mm256_setzero_ps();
		}
		aq8_prefetch_k(t, 8, n_kv, rows, k, k_stride, nb * AQ8_BLOCK); // a decode row's cache is cold
		for (int64_t b = 0; b < nb; b++) {
			const __m256i y = _mm256_loadu_si256((const __m256i *)(qq + b * LG_QK));
			const __m256 d = _mm256_broadcast_ss(dq + b);
			const int64_t o = b * AQ8_BLOCK;
			LG_UNROLL
			for (int j = 0; j < 8; j++) {
				const __m256i x = _mm256_loadu_si256((const __m256i *)(kr[j] + o + 2));
				a[j] = _mm256_fmadd_ps(_mm256_mul_ps(aq8_scale8(kr[j] + o), d), aq8_dot(x, y), a[j]);
			}
		}
		_mm256_storeu_ps(s + t, _mm256_mul_ps(lga_hsum8(a), vscale));
	}
	for (; t < n_kv; t++) {
		const uint8_t *kt = k + EROW(rows, t) * k_stride;
		__m256 a = _mm256_setzero_ps();
		for (int64_t b = 0; b < nb; b++) {
			const uint8_t *kb = kt + b * AQ8_BLOCK;
			const __m256i x = _mm256_loadu_si256((const __m256i *)(kb + 2));
			const __m256i y = _mm256_loadu_si256((const __m256i *)(qq + b * LG_QK));
			a = _mm256_fmadd_ps(_mm256_mul_ps(aq8_scale8(kb), _mm256_broadcast_ss(dq + b)), aq8_dot(x, y), a);
		}
		s[t] = scale * lga_hsum(a);
	}

	// softmax: max, exp, sum in double (elem_avx2.c), then p = e * (float)(1/sum)
	const float inv = elem_softmax_exp_avx2(s, n_kv);
	const __m256 vinv = _mm256_set1_ps(inv);
	for (t = 0; t + 8 <= n_kv; t += 8) _mm256_storeu_ps(s + t, _mm256_mul_ps(_mm256_loadu_ps(s + t), vinv));
	for (; t < n_kv; t++) s[t] = s[t] * inv;

	// out = sum_t p_t v_t, two blocks (64 columns) at a time in registers, then a last
	// single block
	int64_t b0 = 0;
	for (; b0 + 2 <= nbv; b0 += 2) {
		__m256 acc[8];
		LG_UNROLL
		for (int j = 0; j < 8; j++) acc[j] = _mm256_setzero_ps();
		for (t = 0; t < n_kv; t++) {
			const uint8_t *vb = v + EROW(rows, t) * v_stride + b0 * AQ8_BLOCK;
			const __m256 p = _mm256_broadcast_ss(s + t);
			const __m256 p0 = _mm256_mul_ps(p, aq8_scale8(vb)), p1 = _mm256_mul_ps(p, aq8_scale8(vb + AQ8_BLOCK));
			LG_UNROLL
			for (int j = 0; j < 4; j++) {
				acc[j] = _mm256_fmadd_ps(aq8_widen8(vb + 2 + 8 * j), p0, acc[j]);
				acc[j + 4] = _mm256_fmadd_ps(aq8_widen8(vb + AQ8_BLOCK + 2 + 8 * j), p1, acc[j + 4]);
			}
		}
		LG_UNROLL
		for (int j = 0; j < 8; j++) _mm256_storeu_ps(out + b0 * LG_QK + 8 * j, acc[j]);
	}
	if (b0 < nbv) {
		__m256 acc[4];
		LG_UNROLL
		for (int j = 0; j < 4; j++) acc[j] = _mm256_setzero_ps();
		for (t = 0; t < n_kv; t++) {
			const uint8_t *vb = v + EROW(rows, t) * v_stride + b0 * AQ8_BLOCK;
			const __m256 p0 = _mm256_mul_ps(_mm256_broadcast_ss(s + t), aq8_scale8(vb));
			LG_UNROLL
			for (int j = 0; j < 4; j++) acc[j] = _mm256_fmadd_ps(aq8_widen8(vb + 2 + 8 * j), p0, acc[j]);
		}
		LG_UNROLL
		for (int j = 0; j < 4; j++) _mm256_storeu_ps(out + b0 * LG_QK + 8 * j, acc[j]);
	}
}

// ---- the grouped path: g heads, each K and V row read once for all of them, every head
// with the bits of the single-head kernel (attnq8_avx2). Scores run over blocks of eight
// positions and then one at a time, as in a single-head call (the horizontal sum of a
// position's chain follows lga_hsum8's tree in a block and lga_hsum's alone); tiles of
// P positions by H heads (P*H = 8 chains) share the K loads. V: each column's sum is one
// FMA chain over the positions in order; the positions go in runs of about 16 KiB of V
// (elem_run, the next run prefetched), and in a run 8W columns of up to 4 heads at a time
// (H*W <= 8 accumulators, carried in out).

// The score chains of P positions (rows kr[0..P)) with H heads (quants qq, hd bytes
// apart; scales dq, nb floats apart) into a[i*8 + p] for head i, position p.
LGA void aq8_score_tile(const int P, const int H, const int8_t *qq, const float *dq, int64_t nb, int64_t hd,
                        const uint8_t *const *kr, __m256 *a) {
	__m256 acc[8];
	LG_UNROLL
	for (int j = 0; j < 8; j++) acc[j] = _mm256_setzero_ps();
	for (int64_t b = 0; b < nb; b++) {
		const int64_t o = b * AQ8_BLOCK;
		LG_UNROLL
		for (int p = 0; p < P; p++) {
			const __m256i x = _mm256_loadu_si256((const __m256i *)(kr[p] + o + 2)), ax = _mm256_sign_epi8(x, x);
			const __m256 dk = aq8_scale8(kr[p] + o);
			LG_UNROLL
			for (int i = 0; i < H; i++) {
				const __m256i y = _mm256_loadu_si256((const __m256i *)(qq + i * hd + b * LG_QK));
				const __m256 d = _mm256_mul_ps(dk, _mm256_broadcast_ss(dq + i * nb + b));
				acc[i * P + p] = _mm256_fmadd_ps(d, aq8_dot_ax(ax, x, y), acc[i * P + p]);
			}
		}
	}
	LG_UNROLL
	for (int i = 0; i < H; i++) {
		LG_UNROLL
		for (int p = 0; p < P; p++) a[i * 8 + p] = acc[i * P + p];
	}
}

// The scaled scores of the g heads at the eight positions of a block (rows kr) into
// s[0..8) of each head (heads n_kv floats apart): two heads by four positions at a time,
// which touches the rows of the block early (what a cold cache wants), then the odd head.
static void aq8_scores8(int64_t g, const int8_t *qq, const float *dq, int64_t nb, int64_t hd,
                        const uint8_t *const *kr, float scale, float *s, int64_t n_kv) {
	__m256 a[8 * EMBER_GQA_MAX];
	int64_t i = 0;
	for (; i + 2 <= g; i += 2) {
		aq8_score_tile(4, 2, qq + i * hd, dq + i * nb, nb, hd, kr, a + i * 8);
		aq8_score_tile(4, 2, qq + i * hd, dq + i * nb, nb, hd, kr + 4, a + i * 8 + 4);
	}
	if (i < g) aq8_score_tile(8, 1, qq + i * hd, dq + i * nb, nb, hd, kr, a + i * 8);
	const __m256 vscale = _mm256_set1_ps(scale);
	for (i = 0; i < g; i++) _mm256_storeu_ps(s + i * n_kv, _mm256_mul_ps(lga_hsum8(a + i * 8), vscale));
}

// The scaled scores of the g heads at a position outside the blocks (row kt) into s[0]
// of each head.
static void aq8_score1(int64_t g, const int8_t *qq, const float *dq, int64_t nb, int64_t hd, const uint8_t *kt,
                       float scale, float *s, int64_t n_kv) {
	__m256 a[EMBER_GQA_MAX];
	for (int64_t i = 0; i < g; i++) a[i] = _mm256_setzero_ps();
	for (int64_t b = 0; b < nb; b++) {
		const uint8_t *kb = kt + b * AQ8_BLOCK;
		const __m256i x = _mm256_loadu_si256((const __m256i *)(kb + 2)), ax = _mm256_sign_epi8(x, x);
		const __m256 dk = aq8_scale8(kb);
		for (int64_t i = 0; i < g; i++) {
			const __m256i y = _mm256_loadu_si256((const __m256i *)(qq + i * hd + b * LG_QK));
			a[i] = _mm256_fmadd_ps(_mm256_mul_ps(dk, _mm256_broadcast_ss(dq + i * nb + b)), aq8_dot_ax(ax, x, y), a[i]);
		}
	}
	for (int64_t i = 0; i < g; i++) s[i * n_kv] = scale * lga_hsum(a[i]);
}

// out[i*vhd + 8w ..] += p_i[t] * v_t's columns 8w .. for t in [t0, t1), heads i < H (p_i
// = s + i*n_kv), column vectors w < W (W = 8: two blocks, 4: one, 2: half of one). v is
// at the tile's first block, off bytes into its quants; out at the tile's column.
LGA void aq8_v_tile(const int H, const int W, const float *s, int64_t n_kv, const uint8_t *v, int64_t off,
                    int64_t v_stride, const int32_t *rows, int64_t t0, int64_t t1, float *out, int64_t vhd, int64_t pf) {
	const int NB = W >= 4 ? W / 4 : 1, WB = W >= 4 ? 4 : W; // blocks, vectors per block
	__m256 acc[8];
	ea_tile_load(H, W, acc, out, vhd);
	for (int64_t t = t0; t < t1; t++) {
		const uint8_t *vt = v + EROW(rows, t) * v_stride;
		if (pf && t + pf < n_kv) elem_prefetch(v + EROW(rows, t + pf) * v_stride, vhd / LG_QK * AQ8_BLOCK); // the next run
		LG_UNROLL
		for (int bk = 0; bk < NB; bk++) {
			const uint8_t *vb = vt + bk * AQ8_BLOCK;
			const __m256 dv = aq8_scale8(vb);
			__m256 x[4];
			LG_UNROLL
			for (int w = 0; w < WB; w++) x[w] = aq8_widen8(vb + 2 + off + 8 * w);
			LG_UNROLL
			for (int i = 0; i < H; i++) {
				const __m256 pd = _mm256_mul_ps(_mm256_broadcast_ss(s + i * n_kv + t), dv);
				LG_UNROLL
				for (int w = 0; w < WB; w++) acc[i * W + bk * 4 + w] = _mm256_fmadd_ps(x[w], pd, acc[i * W + bk * 4 + w]);
			}
		}
	}
	ea_tile_store(H, W, acc, out, vhd);
}

// aq8_v_tile over all the columns for H <= 4 heads (an elem_vrun), 8W at a time (H*W <= 8).
static void aq8_v_run(int H, const float *s, int64_t n_kv, const void *vp, int64_t v_stride, const int32_t *rows,
                      int64_t t0, int64_t t1, float *out, int64_t vhd, int64_t pf) {
	const uint8_t *v = (const uint8_t *)vp;
	const int64_t nvec = vhd / 8; // a multiple of 4
	const int wmax = H == 1 ? 8 : H == 2 ? 4 : 2;
	for (int64_t c = 0; c < nvec;) {
		const int W = wmax <= nvec - c ? wmax : 4;
		const uint8_t *vc = v + c / 4 * AQ8_BLOCK;
		const int64_t off = c % 4 * 8;
		float *oc = out + 8 * c;
		switch (H * 16 + W) {
#define AQ8_V(h, w) \
	case h * 16 + w: aq8_v_tile(h, w, s, n_kv, vc, off, v_stride, rows, t0, t1, oc, vhd, c ? 0 : pf); break;
			AQ8_V(1, 8) AQ8_V(1, 4) AQ8_V(2, 4) AQ8_V(3, 2) AQ8_V(4, 2)
#undef AQ8_V
		}
		c += W;
	}
}

void attnq8_group_avx2(const float *q, int64_t g, const uint8_t *k, int64_t k_stride, const uint8_t *v,
                       int64_t v_stride, const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim,
                       float scale, float *out, float *scratch) {
	const int64_t hd = head_dim, nb = hd / LG_QK, vhd = v_head_dim;
	const aq8_scratch sc = attnq8_prepare(q, g, n_kv, hd, scratch);
	float *s = sc.s, *dq = sc.dq;
	const int8_t *qq = sc.qq;

	int64_t t = 0;
	for (; t + 8 <= n_kv; t += 8) {
		const uint8_t *kr[8];
		for (int j = 0; j < 8; j++) kr[j] = k + EROW(rows, t + j) * k_stride;
		elem_prefetch_run(t, 8, n_kv, rows, v, v_stride, vhd / LG_QK * AQ8_BLOCK);
		aq8_prefetch_k(t, 8, n_kv, rows, k, k_stride, nb * AQ8_BLOCK);
		aq8_scores8(g, qq, dq, nb, hd, kr, scale, s + t, n_kv);
	}
	for (; t < n_kv; t++) aq8_score1(g, qq, dq, nb, hd, k + EROW(rows, t) * k_stride, scale, s + t, n_kv);

	// softmax: max, exp, sum in double (elem_avx2.c), then p = e * (float)(1/sum)
	for (int64_t i = 0; i < g; i++) {
		float *si = s + i * n_kv;
		const float inv = elem_softmax_exp_avx2(si, n_kv);
		const __m256 vinv = _mm256_set1_ps(inv);
		for (t = 0; t + 8 <= n_kv; t += 8) _mm256_storeu_ps(si + t, _mm256_mul_ps(_mm256_loadu_ps(si + t), vinv));
		for (; t < n_kv; t++) si[t] = si[t] * inv;
	}

	// out = sum_t p_t v_t: runs of positions (about 16 KiB of V), heads four at a time
	elem_v_runs(aq8_v_run, g, s, n_kv, v, v_stride, rows, out, vhd, vhd / LG_QK * AQ8_BLOCK);
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
