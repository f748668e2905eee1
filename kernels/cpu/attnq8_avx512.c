// attnq8_avx512.c: AVX-512 attention over a Q8_0 KV cache (EMBER_ISA_AVX512 and
// EMBER_ISA_AVX512VNNI), single-head and grouped, with the bits of the AVX2 kernels
// (attnq8_avx2.c) on 16-lane vectors:
//
// Scores: the AVX2 kernel keeps one 8-lane float chain per position (and head), lane l
// adding fma(dK*dQ, the exact int32 sum of the products of bytes 4l..4l+3 of a block, as
// float) block after block. Here a 16-lane vector holds the chains of two positions (lanes
// 0-7 and 8-15, their quants loaded into the two halves, q's block in both), with the
// same lane sums, the same float products dK*dQ and the same FMAs, and the sums of a
// block of eight positions go through lga_hsum8, those of the positions after the last
// whole block of eight through lga_hsum, as in the AVX2 kernel. The int32 lane sums are
// exact in both ways of forming them:
//   VNNI: vpdpbusd takes an unsigned first operand, so it gets k ^ 0x80 = k + 128 and q,
//   starting from -128 * (the sum of the lane's four q) (every partial sum fits easily in
//   an int32);
//   without VNNI: llama.cpp's sign trick (|k| times q with k's sign, through vpmaddubsw,
//   whose pair sums stay within int16 for quants in [-127, 127], then vpmaddwd), with a
//   masked negation for want of vpsignb.
//
// Softmax: elem_softmax_exp_avx512, the bits of elem_softmax_exp_avx2.
//
// V: every column's sum is one FMA chain over the positions in order, fma(v as float,
// p*dV, acc), as in the AVX2 kernel; 16 columns a vector, up to 16 accumulators a tile.
//
// K prefetch: the score loops prefetch the K rows ELEM_KPF positions ahead
// (aq8_prefetch_k), as the f16 kernels do.
#include "elem.h"
#include "attnq8.h"

#if defined(__x86_64__)
#include <immintrin.h> // before the target pragma: its functions carry their own targets
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni"))), apply_to = function)
#else
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")
#endif
#include "lg_x86.h"
#include "elem_x86.h"

// The f16 scales at pa and pb, widened, in lanes 0-7 and 8-15.
LGA __m512 a5q_scale2(const uint8_t *pa, const uint8_t *pb) {
	return _mm512_cvtph_ps(_mm256_mask_set1_epi16(_mm256_set1_epi16((short)lg_rd16(pa)), 0xff00, (short)lg_rd16(pb)));
}

// The 32 quants at pa and pb in the low and high halves.
LGA __m512i a5q_load2(const uint8_t *pa, const uint8_t *pb) {
	return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)pa)),
	                          _mm256_loadu_si256((const __m256i *)pb), 1);
}

// A block of K quants x of two positions made ready for the products with any q
// (a5q_dot): VNNI: x ^ 0x80; else |x| and the mask of x's negative bytes.
typedef struct {
	__m512i x;
	__mmask64 neg;
} a5q_k;

LGA a5q_k a5q_kprep(const int vnni, __m512i x) {
	a5q_k r;
	if (vnni) {
		r.x = _mm512_xor_si512(x, _mm512_set1_epi8((char)0x80));
		r.neg = 0;
	} else {
		r.x = _mm512_abs_epi8(x);
		r.neg = _mm512_movepi8_mask(x);
	}
	return r;
}

// A block of q's quants (32 bytes at p) in both halves, and with VNNI c = -128 * the sum
// of each lane's four quants.
typedef struct {
	__m512i y, c;
} a5q_q;

LGA a5q_q a5q_qprep(const int vnni, const int8_t *p) {
	a5q_q r;
	r.y = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)p));
	r.c = vnni ? _mm512_sub_epi32(_mm512_setzero_si512(),
	                              _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8((char)0x80), r.y))
	           : _mm512_setzero_si512();
	return r;
}

// The 16 int32 sums of 4 products of k's and q's bytes, as floats (exact).
LGA __m512 a5q_dot(const int vnni, a5q_k k, a5q_q q) {
	if (vnni) return _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(q.c, k.x, q.y));
	const __m512i sy = _mm512_mask_sub_epi8(q.y, k.neg, _mm512_setzero_si512(), q.y);
	return _mm512_cvtepi32_ps(_mm512_madd_epi16(_mm512_maddubs_epi16(k.x, sy), _mm512_set1_epi16(1)));
}

// The score chains of 2P positions (rows kr[0..2P)) with H heads (quants qq, hd bytes
// apart; scales dq, nb floats apart): h[i*2P + p] (8 lanes) for head i, position p.
LGA void a5q_score_tile(const int vnni, const int P, const int H, const int8_t *qq, const float *dq, int64_t nb,
                        int64_t hd, const uint8_t *const *kr, __m256 *h) {
	__m512 acc[16];
	LG_UNROLL
	for (int j = 0; j < 16; j++) acc[j] = _mm512_setzero_ps();
	for (int64_t b = 0; b < nb; b++) {
		const int64_t o = b * AQ8_BLOCK;
		a5q_k x[8];
		__m512 dk[8];
		LG_UNROLL
		for (int p = 0; p < P; p++) {
			x[p] = a5q_kprep(vnni, a5q_load2(kr[2 * p] + o + 2, kr[2 * p + 1] + o + 2));
			dk[p] = a5q_scale2(kr[2 * p] + o, kr[2 * p + 1] + o);
		}
		LG_UNROLL
		for (int i = 0; i < H; i++) {
			const a5q_q y = a5q_qprep(vnni, qq + i * hd + b * LG_QK);
			const __m512 d = _mm512_set1_ps(dq[i * nb + b]);
			LG_UNROLL
			for (int p = 0; p < P; p++)
				acc[i * P + p] = _mm512_fmadd_ps(_mm512_mul_ps(dk[p], d), a5q_dot(vnni, x[p], y), acc[i * P + p]);
		}
	}
	LG_UNROLL
	for (int i = 0; i < H; i++) {
		LG_UNROLL
		for (int p = 0; p < P; p++) {
			h[i * 2 * P + 2 * p] = _mm512_castps512_ps256(acc[i * P + p]);
			h[i * 2 * P + 2 * p + 1] = _mm512_extractf32x8_ps(acc[i * P + p], 1);
		}
	}
}

// The scaled scores of g heads at a position outside the blocks of eight (row kt) into
// s[0] of each head (heads n_kv floats apart): the position in both halves, the low one's
// chain summed as the AVX2 kernel's.
LGA void a5q_score1(const int vnni, int64_t g, const int8_t *qq, const float *dq, int64_t nb, int64_t hd,
                    const uint8_t *kt, float scale, float *s, int64_t n_kv) {
	__m512 a[EMBER_GQA_MAX];
	for (int64_t i = 0; i < g; i++) a[i] = _mm512_setzero_ps();
	for (int64_t b = 0; b < nb; b++) {
		const uint8_t *kb = kt + b * AQ8_BLOCK;
		const a5q_k x = a5q_kprep(vnni, a5q_load2(kb + 2, kb + 2));
		const __m512 dk = a5q_scale2(kb, kb);
		for (int64_t i = 0; i < g; i++) {
			const a5q_q y = a5q_qprep(vnni, qq + i * hd + b * LG_QK);
			a[i] = _mm512_fmadd_ps(_mm512_mul_ps(dk, _mm512_set1_ps(dq[i * nb + b])), a5q_dot(vnni, x, y), a[i]);
		}
	}
	for (int64_t i = 0; i < g; i++) s[i * n_kv] = scale * lga_hsum(_mm512_castps512_ps256(a[i]));
}

// s[t] = scale * (the sums of h[j] for the eight positions j of a block) as the AVX2
// kernel's lga_hsum8.
LGA void a5q_store8(const __m256 *h, float scale, float *s) {
	_mm256_storeu_ps(s, _mm256_mul_ps(lga_hsum8(h), _mm256_set1_ps(scale)));
}

// out[16w ..] += p[t] * v_t's columns 16w .. for t in [0, n_kv), w < 2NB (NB blocks from
// the one at v of each row); out at the tile's first column.
LGA void a5q_v_tile1(const int NB, const float *p, int64_t n_kv, const uint8_t *v, int64_t v_stride,
                     const int32_t *rows, float *out) {
	__m512 acc[16];
	LG_UNROLL
	for (int w = 0; w < 2 * NB; w++) acc[w] = _mm512_setzero_ps();
	for (int64_t t = 0; t < n_kv; t++) {
		const uint8_t *vt = v + EROW(rows, t) * v_stride;
		const __m512 pt = _mm512_set1_ps(p[t]);
		LG_UNROLL
		for (int bk = 0; bk < NB; bk++) {
			const uint8_t *vb = vt + bk * AQ8_BLOCK;
			const __m512 pd = _mm512_mul_ps(pt, _mm512_cvtph_ps(_mm256_set1_epi16((short)lg_rd16(vb))));
			LG_UNROLL
			for (int w = 0; w < 2; w++) {
				const __m512 x = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(vb + 2 + 16 * w))));
				acc[2 * bk + w] = _mm512_fmadd_ps(x, pd, acc[2 * bk + w]);
			}
		}
	}
	LG_UNROLL
	for (int w = 0; w < 2 * NB; w++) _mm512_storeu_ps(out + 16 * w, acc[w]);
}

LGA void a5q_single(const int vnni, const float *q, const uint8_t *k, int64_t k_stride, const uint8_t *v,
                    int64_t v_stride, const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim,
                    float scale, float *out, float *scratch) {
	const int64_t nb = head_dim / LG_QK, nbv = v_head_dim / LG_QK;
	const aq8_scratch sc = attnq8_prepare(q, 1, n_kv, head_dim, scratch);
	float *s = sc.s;
	const float *dq = sc.dq;
	const int8_t *qq = sc.qq;

	// scores: sixteen positions at a time, then eight, then one at a time
	int64_t t = 0;
	for (; t + 16 <= n_kv; t += 16) {
		const uint8_t *kr[16];
		LG_UNROLL
		for (int j = 0; j < 16; j++) kr[j] = k + EROW(rows, t + j) * k_stride;
		aq8_prefetch_k(t, 16, n_kv, rows, k, k_stride, nb * AQ8_BLOCK);
		__m256 h[16];
		a5q_score_tile(vnni, 8, 1, qq, dq, nb, head_dim, kr, h);
		a5q_store8(h, scale, s + t);
		a5q_store8(h + 8, scale, s + t + 8);
	}
	for (; t + 8 <= n_kv; t += 8) {
		const uint8_t *kr[8];
		LG_UNROLL
		for (int j = 0; j < 8; j++) kr[j] = k + EROW(rows, t + j) * k_stride;
		__m256 h[8];
		a5q_score_tile(vnni, 4, 1, qq, dq, nb, head_dim, kr, h);
		a5q_store8(h, scale, s + t);
	}
	for (; t < n_kv; t++) a5q_score1(vnni, 1, qq, dq, nb, head_dim, k + EROW(rows, t) * k_stride, scale, s + t, n_kv);

	// softmax: max, exp, sum in double (the AVX2 kernel's bits), then p = e * (float)(1/sum)
	const float inv = elem_softmax_exp_avx512(s, n_kv);
	const __m512 vinv = _mm512_set1_ps(inv);
	for (t = 0; t + 16 <= n_kv; t += 16) _mm512_storeu_ps(s + t, _mm512_mul_ps(_mm512_loadu_ps(s + t), vinv));
	for (; t < n_kv; t++) s[t] = s[t] * inv;

	// out = sum_t p_t v_t, up to eight blocks (256 columns) at a time in registers
	for (int64_t b0 = 0; b0 < nbv;) {
		const int64_t r = nbv - b0;
		const uint8_t *vb = v + b0 * AQ8_BLOCK;
		float *ob = out + b0 * LG_QK;
		if (r >= 8) {
			a5q_v_tile1(8, s, n_kv, vb, v_stride, rows, ob);
			b0 += 8;
		} else if (r >= 4) {
			a5q_v_tile1(4, s, n_kv, vb, v_stride, rows, ob);
			b0 += 4;
		} else if (r >= 2) {
			a5q_v_tile1(2, s, n_kv, vb, v_stride, rows, ob);
			b0 += 2;
		} else {
			a5q_v_tile1(1, s, n_kv, vb, v_stride, rows, ob);
			b0 += 1;
		}
	}
}

void attnq8_avx512(int vnni, const float *q, const uint8_t *k, int64_t k_stride, const uint8_t *v, int64_t v_stride,
                   const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim, float scale,
                   float *out, float *scratch) {
	if (vnni)
		a5q_single(1, q, k, k_stride, v, v_stride, rows, n_kv, head_dim, v_head_dim, scale, out, scratch);
	else
		a5q_single(0, q, k, k_stride, v, v_stride, rows, n_kv, head_dim, v_head_dim, scale, out, scratch);
}

// ---- the grouped path: g heads, each K and V row read once for all of them, every head
// with the bits of the single-head kernels (this one's and attnq8_avx2's). Scores over
// blocks of eight positions, tiles of four pairs of positions by up to four heads sharing
// the K loads, then the positions after the blocks one at a time. V: runs of positions
// (about 16 KiB of V, elem_v_runs, the next run prefetched), in a run 32NB columns of up
// to 4 heads at a time (H*2NB <= 16 accumulators, carried in out).

// The scaled scores of the g heads at the eight positions of a block (rows kr) into
// s[0..8) of each head (heads n_kv floats apart).
LGA void a5q_scores8(const int vnni, int64_t g, const int8_t *qq, const float *dq, int64_t nb, int64_t hd,
                     const uint8_t *const *kr, float scale, float *s, int64_t n_kv) {
	__m256 h[8 * EMBER_GQA_MAX];
	int64_t i = 0;
	for (; i + 4 <= g; i += 4) a5q_score_tile(vnni, 4, 4, qq + i * hd, dq + i * nb, nb, hd, kr, h + i * 8);
	switch (g - i) {
	case 3: a5q_score_tile(vnni, 4, 3, qq + i * hd, dq + i * nb, nb, hd, kr, h + i * 8); break;
	case 2: a5q_score_tile(vnni, 4, 2, qq + i * hd, dq + i * nb, nb, hd, kr, h + i * 8); break;
	case 1: a5q_score_tile(vnni, 4, 1, qq + i * hd, dq + i * nb, nb, hd, kr, h + i * 8); break;
	}
	for (i = 0; i < g; i++) a5q_store8(h + i * 8, scale, s + i * n_kv);
}

// out[i*vhd + 16w ..] += p_i[t] * v_t's columns 16w .. for t in [t0, t1), heads i < H
// (p_i = s + i*n_kv), w < 2NB (NB blocks from the one at v of each row); out at the tile's
// first column. pf != 0: prefetch the rows pf positions on (the next run).
LGA void a5q_v_tile(const int H, const int NB, const float *s, int64_t n_kv, const uint8_t *v, int64_t v_stride,
                    const int32_t *rows, int64_t t0, int64_t t1, float *out, int64_t vhd, int64_t pf) {
	__m512 acc[16];
	LG_UNROLL
	for (int i = 0; i < H; i++) {
		LG_UNROLL
		for (int w = 0; w < 2 * NB; w++) acc[i * 2 * NB + w] = _mm512_loadu_ps(out + i * vhd + 16 * w);
	}
	for (int64_t t = t0; t < t1; t++) {
		const uint8_t *vt = v + EROW(rows, t) * v_stride;
		if (pf && t + pf < n_kv) elem_prefetch(v + EROW(rows, t + pf) * v_stride, vhd / LG_QK * AQ8_BLOCK); // the next run
		LG_UNROLL
		for (int bk = 0; bk < NB; bk++) {
			const uint8_t *vb = vt + bk * AQ8_BLOCK;
			const __m512 dv = _mm512_cvtph_ps(_mm256_set1_epi16((short)lg_rd16(vb)));
			__m512 x[2];
			LG_UNROLL
			for (int w = 0; w < 2; w++)
				x[w] = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(vb + 2 + 16 * w))));
			LG_UNROLL
			for (int i = 0; i < H; i++) {
				const __m512 pd = _mm512_mul_ps(_mm512_set1_ps(s[i * n_kv + t]), dv);
				LG_UNROLL
				for (int w = 0; w < 2; w++)
					acc[i * 2 * NB + 2 * bk + w] = _mm512_fmadd_ps(x[w], pd, acc[i * 2 * NB + 2 * bk + w]);
			}
		}
	}
	LG_UNROLL
	for (int i = 0; i < H; i++) {
		LG_UNROLL
		for (int w = 0; w < 2 * NB; w++) _mm512_storeu_ps(out + i * vhd + 16 * w, acc[i * 2 * NB + w]);
	}
}

// a5q_v_tile over all the columns for H <= 4 heads (an elem_vrun), NB blocks at a time,
// the most that fit (H*2NB <= 16).
static void a5q_v_run(int H, const float *s, int64_t n_kv, const void *vp, int64_t v_stride, const int32_t *rows,
                      int64_t t0, int64_t t1, float *out, int64_t vhd, int64_t pf) {
	const uint8_t *v = (const uint8_t *)vp;
	const int64_t nbv = vhd / LG_QK;
	for (int64_t c = 0; c < nbv;) {
		int NB = H == 1 ? 8 : H == 2 ? 4 : 2;
		while (NB > nbv - c) NB /= 2;
		const uint8_t *vc = v + c * AQ8_BLOCK;
		float *oc = out + c * LG_QK;
		switch (H * 16 + NB) {
#define A5Q_V(h, nb) \
	case h * 16 + nb: a5q_v_tile(h, nb, s, n_kv, vc, v_stride, rows, t0, t1, oc, vhd, c ? 0 : pf); break;
			A5Q_V(1, 8) A5Q_V(1, 4) A5Q_V(1, 2) A5Q_V(1, 1) A5Q_V(2, 4) A5Q_V(2, 2) A5Q_V(2, 1)
			A5Q_V(3, 2) A5Q_V(3, 1) A5Q_V(4, 2) A5Q_V(4, 1)
#undef A5Q_V
		}
		c += NB;
	}
}

LGA void a5q_group(const int vnni, const float *q, int64_t g, const uint8_t *k, int64_t k_stride, const uint8_t *v,
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
		a5q_scores8(vnni, g, qq, dq, nb, hd, kr, scale, s + t, n_kv);
	}
	for (; t < n_kv; t++) a5q_score1(vnni, g, qq, dq, nb, hd, k + EROW(rows, t) * k_stride, scale, s + t, n_kv);

	// softmax: max, exp, sum in double (the AVX2 kernel's bits), then p = e * (float)(1/sum)
	for (int64_t i = 0; i < g; i++) {
		float *si = s + i * n_kv;
		const float inv = elem_softmax_exp_avx512(si, n_kv);
		const __m512 vinv = _mm512_set1_ps(inv);
		for (t = 0; t + 16 <= n_kv; t += 16) _mm512_storeu_ps(si + t, _mm512_mul_ps(_mm512_loadu_ps(si + t), vinv));
		for (; t < n_kv; t++) si[t] = si[t] * inv;
	}

	// out = sum_t p_t v_t: runs of positions (about 16 KiB of V), heads four at a time
	elem_v_runs(a5q_v_run, g, s, n_kv, v, v_stride, rows, out, vhd, vhd / LG_QK * AQ8_BLOCK);
}

void attnq8_group_avx512(int vnni, const float *q, int64_t g, const uint8_t *k, int64_t k_stride, const uint8_t *v,
                         int64_t v_stride, const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim,
                         float scale, float *out, float *scratch) {
	if (vnni)
		a5q_group(1, q, g, k, k_stride, v, v_stride, rows, n_kv, head_dim, v_head_dim, scale, out, scratch);
	else
		a5q_group(0, q, g, k, k_stride, v, v_stride, rows, n_kv, head_dim, v_head_dim, scale, out, scratch);
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
