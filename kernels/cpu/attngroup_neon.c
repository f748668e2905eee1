// attngroup_neon.c: aarch64 Advanced SIMD attention of the g query heads of one KV head
// over an f16 cache (see attngroup.c for the scalar reference and the scratch layout).
// Each K and V row is read from memory once for all g heads, and every head gets the
// bits of the single-head kernel (elem_attention_neon): a score is one 4-lane FMA chain
// over the head's 4-element steps, vaddvq, then the last head_dim % 4 products in order,
// wherever the position falls, so tiles of P positions by H heads (P*H <= 16 chains)
// share the loads and conversions of K; every V column is one FMA chain over the
// positions in order, in runs of about 16 KiB of V (elem_run, the next run prefetched)
// with 4W columns of up to 4 heads in registers (H*W <= 16).
#include "elem.h"

#if defined(__aarch64__)
#include <arm_neon.h>

#define AGN static inline __attribute__((always_inline))

AGN float32x4_t agn_h2f4(const uint16_t *p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }

// The scaled scores of P positions (rows kr[0..P)) with H heads (q16, heads hd floats
// apart) into s[i*n_kv + p].
AGN void agn_score_tile(const int P, const int H, const float *q16, int64_t hd, const uint16_t *const *kr,
                        float scale, float *s, int64_t n_kv) {
	const int64_t hd4 = hd & ~(int64_t)3;
	float32x4_t a[16];
	LG_UNROLL
	for (int j = 0; j < P * H; j++) a[j] = vdupq_n_f32(0);
	for (int64_t d = 0; d < hd4; d += 4) {
		float32x4_t qv[4];
		LG_UNROLL
		for (int i = 0; i < H; i++) qv[i] = vld1q_f32(q16 + i * hd + d);
		LG_UNROLL
		for (int p = 0; p < P; p++) {
			const float32x4_t kv = agn_h2f4(kr[p] + d);
			LG_UNROLL
			for (int i = 0; i < H; i++) a[i * P + p] = vfmaq_f32(a[i * P + p], qv[i], kv);
		}
	}
	LG_UNROLL
	for (int i = 0; i < H; i++)
		LG_UNROLL
		for (int p = 0; p < P; p++) {
			float dot = vaddvq_f32(a[i * P + p]);
			for (int64_t d = hd4; d < hd; d++) dot += q16[i * hd + d] * lg_h2f(kr[p][d]);
			s[i * n_kv + p] = scale * dot;
		}
}

// agn_score_tile for the g heads, four at a time.
AGN void agn_scores(const int P, int64_t g, const float *q16, int64_t hd, const uint16_t *const *kr, float scale,
                    float *s, int64_t n_kv) {
	int64_t i = 0;
	for (; i + 4 <= g; i += 4) agn_score_tile(P, 4, q16 + i * hd, hd, kr, scale, s + i * n_kv, n_kv);
	if (i + 2 <= g) {
		agn_score_tile(P, 2, q16 + i * hd, hd, kr, scale, s + i * n_kv, n_kv);
		i += 2;
	}
	if (i < g) agn_score_tile(P, 1, q16 + i * hd, hd, kr, scale, s + i * n_kv, n_kv);
}

// out[i*vhd + 4w ..] += p_i[t] * v_t[4w ..] for t in [t0, t1), heads i < H (p_i = s +
// i*n_kv), column vectors w < W; v and out start at the tile's column.
AGN void agn_v_tile(const int H, const int W, const float *s, int64_t n_kv, const uint16_t *v, int64_t v_stride,
                    const int32_t *rows, int64_t t0, int64_t t1, float *out, int64_t vhd, int64_t pf, int64_t pfb) {
	float32x4_t acc[16];
	en_tile_load(H, W, acc, out, vhd);
	for (int64_t t = t0; t < t1; t++) {
		const uint16_t *vt = v + EROW(rows, t) * v_stride;
		if (pf && t + pf < n_kv) elem_prefetch(v + EROW(rows, t + pf) * v_stride, pfb); // the next run
		float p[4];
		LG_UNROLL
		for (int i = 0; i < H; i++) p[i] = s[i * n_kv + t];
		LG_UNROLL
		for (int w = 0; w < W; w++) {
			const float32x4_t x = agn_h2f4(vt + 4 * w);
			LG_UNROLL
			for (int i = 0; i < H; i++) acc[i * W + w] = vfmaq_n_f32(acc[i * W + w], x, p[i]);
		}
	}
	en_tile_store(H, W, acc, out, vhd);
}

// agn_v_tile over nvec column vectors (from v and out) for H <= 4 heads (out heads
// ostride floats apart), 4W columns at a time (H*W <= 16); the first tile prefetches the
// next run's pfb bytes of each row.
static void agn_v_cols(int H, const float *s, int64_t n_kv, const uint16_t *v, int64_t v_stride, const int32_t *rows,
                       int64_t t0, int64_t t1, float *out, int64_t ostride, int64_t nvec, int64_t pf, int64_t pfb) {
	const int wmax = H == 1 ? 16 : H == 2 ? 8 : 4;
	for (int64_t c = 0; c < nvec;) {
		const int W = wmax <= nvec - c ? wmax : 4 <= nvec - c ? 4 : 1;
		const uint16_t *vc = v + 4 * c;
		float *oc = out + 4 * c;
		switch (H * 32 + W) {
#define AGN_V(h, w) \
	case h * 32 + w: agn_v_tile(h, w, s, n_kv, vc, v_stride, rows, t0, t1, oc, ostride, c ? 0 : pf, pfb); break;
			AGN_V(1, 16) AGN_V(1, 4) AGN_V(1, 1) AGN_V(2, 8) AGN_V(2, 4) AGN_V(2, 1)
			AGN_V(3, 4) AGN_V(3, 1) AGN_V(4, 4) AGN_V(4, 1)
#undef AGN_V
		}
		c += W;
	}
}

void attn_q16_neon(const float *q, int64_t n, float *q16) {
	int64_t d = 0;
	for (; d + 4 <= n; d += 4) vst1q_f32(q16 + d, vcvt_f32_f16(vcvt_f16_f32(vld1q_f32(q + d))));
	for (; d < n; d++) q16[d] = lg_h2f(lg_f2h(q[d]));
}

void attn_scores_neon(const float *q16, int64_t g, const uint16_t *k, int64_t k_stride, const int32_t *rows,
                      int64_t t0, int64_t t1, int64_t n_kv, int64_t hd, float scale, float *s, const uint16_t *v,
                      int64_t v_bstride, int64_t vbytes) {
	int64_t t = t0;
	for (; t + 4 <= t1; t += 4) {
		const uint16_t *kr[4];
		for (int j = 0; j < 4; j++) kr[j] = k + EROW(rows, t + j) * k_stride;
		if (v) elem_prefetch_run(t, 4, n_kv, rows, v, v_bstride, vbytes);
		agn_scores(4, g, q16, hd, kr, scale, s + t, n_kv);
	}
	for (; t < t1; t++) {
		const uint16_t *kt = k + EROW(rows, t) * k_stride;
		agn_scores(1, g, q16, hd, &kt, scale, s + t, n_kv);
	}
}

void attn_probs_neon(float *s, int64_t n_kv) { // max, exp, sum in double, p rounded to f16
	const float inv = elem_softmax_exp_neon(s, n_kv);
	int64_t t = 0;
	for (; t + 4 <= n_kv; t += 4) vst1q_f32(s + t, vcvt_f32_f16(vcvt_f16_f32(vmulq_n_f32(vld1q_f32(s + t), inv))));
	for (; t < n_kv; t++) s[t] = lg_h2f(lg_f2h(s[t] * inv));
}

void attn_values_neon(const float *s, int64_t g, int64_t n_kv, const uint16_t *v, int64_t v_stride,
                      const int32_t *rows, int64_t vhd, int64_t c0, int64_t c1, float *out, int64_t ostride) {
	const int64_t vd4 = vhd & ~(int64_t)3, e1 = c1 < vd4 ? c1 : vd4, nvec = (e1 - c0) / 4;
	const int64_t n = elem_run(2 * vhd), pfb = 2 * (e1 - c0);
	for (int64_t i = 0; i < g; i++) memset(out + i * ostride + c0, 0, (size_t)(c1 - c0) * 4);
	// runs of positions (16 KiB of V), heads four at a time, then the last vhd % 4
	// columns one at a time
	for (int64_t t0 = 0; nvec > 0 && t0 < n_kv; t0 += n) {
		const int64_t t1 = t0 + n < n_kv ? t0 + n : n_kv;
		for (int64_t i = 0; i < g; i += 4)
			agn_v_cols((int)(g - i < 4 ? g - i : 4), s + i * n_kv, n_kv, v + c0, v_stride, rows, t0, t1,
			           out + i * ostride + c0, ostride, nvec, i ? 0 : n, pfb);
	}
	for (int64_t d = e1 > c0 ? e1 : c0; d < c1; d++)
		for (int64_t i = 0; i < g; i++) {
			float a = 0;
			for (int64_t t = 0; t < n_kv; t++) a += s[i * n_kv + t] * lg_h2f(v[EROW(rows, t) * v_stride + d]);
			out[i * ostride + d] = a;
		}
}

void attn_group_neon(const float *q, int64_t g, const uint16_t *k, int64_t k_stride, const uint16_t *v,
                     int64_t v_stride, const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim,
                     float scale, float *out, float *scratch) {
	float *s = scratch, *q16 = scratch + g * n_kv;
	attn_q16_neon(q, g * head_dim, q16);
	attn_scores_neon(q16, g, k, k_stride, rows, 0, n_kv, n_kv, head_dim, scale, s, v, 2 * v_stride, 2 * v_head_dim);
	for (int64_t i = 0; i < g; i++) attn_probs_neon(s + i * n_kv, n_kv);
	attn_values_neon(s, g, n_kv, v, v_stride, rows, v_head_dim, 0, v_head_dim, out, v_head_dim);
}

#endif
