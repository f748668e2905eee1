// attnq8_neon.c: aarch64 Advanced SIMD attention over a Q8_0 KV cache (see attnq8.c for
// the scalar reference and the scratch layout). Block dots use sdot (vdotq_s32) where the
// compiler targets the dotprod extension and vmull/vpaddl otherwise (as lg_neon.c), then
// an FMA with dK*dQ into 4 float lanes per position, 4 positions at a time. V: 64
// columns (two blocks) in 16 registers over all positions, FMAed with p*dV.
#include "elem.h"
#include "attnq8.h"

#if defined(__aarch64__)
#include <arm_neon.h>

#define AQN static inline __attribute__((always_inline))

// acc + per-lane sums of the 4 byte products of a and b.
AQN int32x4_t aqn_dot(int32x4_t acc, int8x16_t a, int8x16_t b) {
#if defined(__ARM_FEATURE_DOTPROD)
	return vdotq_s32(acc, a, b);
#else
	const int32x4_t lo = vpaddlq_s16(vmull_s8(vget_low_s8(a), vget_low_s8(b)));
	const int32x4_t hi = vpaddlq_s16(vmull_high_s8(a, b));
	return vaddq_s32(acc, vpaddq_s32(lo, hi));
#endif
}

// The integer dot of the 32 quants of a K block (k0, k1) and of q (at y), in 4 lanes.
AQN float32x4_t aqn_block2(int8x16_t k0, int8x16_t k1, const int8_t *y) {
	return vcvtq_f32_s32(aqn_dot(aqn_dot(vdupq_n_s32(0), k0, vld1q_s8(y)), k1, vld1q_s8(y + 16)));
}

// aqn_block2 of the K block at kb.
AQN float32x4_t aqn_block(const uint8_t *kb, const int8_t *y) {
	return aqn_block2(vld1q_s8((const int8_t *)(kb + 2)), vld1q_s8((const int8_t *)(kb + 18)), y);
}

// 16 int8 at p8 widened to 4 vectors of floats.
AQN void aqn_widen16(float32x4_t *x, const uint8_t *p8) {
	const int8x16_t b = vld1q_s8((const int8_t *)p8);
	const int16x8_t lo = vmovl_s8(vget_low_s8(b)), hi = vmovl_high_s8(b);
	x[0] = vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo)));
	x[1] = vcvtq_f32_s32(vmovl_high_s16(lo));
	x[2] = vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi)));
	x[3] = vcvtq_f32_s32(vmovl_high_s16(hi));
}

// 16 int8 widened to 4 vectors of floats, FMAed with p into acc[0..4).
AQN void aqn_mad16(float32x4_t *acc, const uint8_t *p8, float p) {
	float32x4_t x[4];
	aqn_widen16(x, p8);
	for (int j = 0; j < 4; j++) acc[j] = vfmaq_n_f32(acc[j], x[j], p);
}

void attnq8_neon(const float *q, const uint8_t *k, int64_t k_stride, const uint8_t *v, int64_t v_stride,
                 const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim, float scale,
                 float *out, float *scratch) {
	const int64_t nb = head_dim / LG_QK, nbv = v_head_dim / LG_QK;
	const aq8_scratch sc = attnq8_prepare(q, 1, n_kv, head_dim, scratch);
	float *s = sc.s;
	const float *dq = sc.dq;
	const int8_t *qq = sc.qq;

	int64_t t = 0;
	for (; t + 4 <= n_kv; t += 4) {
		const uint8_t *kr[4] = {k + EROW(rows, t) * k_stride, k + EROW(rows, t + 1) * k_stride,
		                        k + EROW(rows, t + 2) * k_stride, k + EROW(rows, t + 3) * k_stride};
		float32x4_t a[4] = {vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0)};
		for (int64_t b = 0; b < nb; b++) {
			const int64_t o = b * AQ8_BLOCK;
			for (int j = 0; j < 4; j++)
				a[j] = vfmaq_n_f32(a[j], aqn_block(kr[j] + o, qq + b * LG_QK), lg_h2f(lg_rd16(kr[j] + o)) * dq[b]);
		}
		for (int j = 0; j < 4; j++) s[t + j] = scale * vaddvq_f32(a[j]);
	}
	for (; t < n_kv; t++) {
		const uint8_t *kt = k + EROW(rows, t) * k_stride;
		float32x4_t a = vdupq_n_f32(0);
		for (int64_t b = 0; b < nb; b++) {
			const uint8_t *kb = kt + b * AQ8_BLOCK;
			a = vfmaq_n_f32(a, aqn_block(kb, qq + b * LG_QK), lg_h2f(lg_rd16(kb)) * dq[b]);
		}
		s[t] = scale * vaddvq_f32(a);
	}

	// softmax: max, exp, sum in double (elem_neon.c), then p = e * (float)(1/sum)
	const float inv = elem_softmax_exp_neon(s, n_kv);
	t = 0;
	for (; t + 4 <= n_kv; t += 4) vst1q_f32(s + t, vmulq_n_f32(vld1q_f32(s + t), inv));
	for (; t < n_kv; t++) s[t] = s[t] * inv;

	// out = sum_t p_t v_t, two blocks (64 columns) at a time, then a last single block
	int64_t b0 = 0;
	for (; b0 < nbv; b0 += 2) {
		const int two = b0 + 2 <= nbv;
		float32x4_t acc[16];
		for (int j = 0; j < 16; j++) acc[j] = vdupq_n_f32(0);
		for (t = 0; t < n_kv; t++) {
			const uint8_t *vb = v + EROW(rows, t) * v_stride + b0 * AQ8_BLOCK;
			const float p0 = s[t] * lg_h2f(lg_rd16(vb));
			aqn_mad16(acc, vb + 2, p0);
			aqn_mad16(acc + 4, vb + 18, p0);
			if (two) {
				const float p1 = s[t] * lg_h2f(lg_rd16(vb + AQ8_BLOCK));
				aqn_mad16(acc + 8, vb + AQ8_BLOCK + 2, p1);
				aqn_mad16(acc + 12, vb + AQ8_BLOCK + 18, p1);
			}
		}
		for (int j = 0; j < (two ? 16 : 8); j++) vst1q_f32(out + b0 * LG_QK + 4 * j, acc[j]);
	}
}

// ---- the grouped path: g heads, each K and V row read once for all of them, every head
// with the bits of the single-head kernel (attnq8_neon). A score is one chain over the
// blocks wherever its position falls, so tiles of P positions by H heads (P*H <= 8
// chains) share the K loads; every V column is one FMA chain over the positions in
// order, in runs of about 16 KiB of V (elem_run, the next run prefetched) with 4W columns
// of up to 4 heads in registers (H*W <= 16).

// The scaled scores of P positions (rows kr[0..P)) with H heads (quants qq, hd bytes
// apart; scales dq, nb floats apart) into s[i*n_kv + p].
AQN void aqn_score_tile(const int P, const int H, const int8_t *qq, const float *dq, int64_t nb, int64_t hd,
                        const uint8_t *const *kr, float scale, float *s, int64_t n_kv) {
	float32x4_t a[8];
	LG_UNROLL
	for (int j = 0; j < P * H; j++) a[j] = vdupq_n_f32(0);
	for (int64_t b = 0; b < nb; b++) {
		const int64_t o = b * AQ8_BLOCK;
		LG_UNROLL
		for (int p = 0; p < P; p++) {
			const int8x16_t k0 = vld1q_s8((const int8_t *)(kr[p] + o + 2)), k1 = vld1q_s8((const int8_t *)(kr[p] + o + 18));
			const float dk = lg_h2f(lg_rd16(kr[p] + o));
			LG_UNROLL
			for (int i = 0; i < H; i++)
				a[i * P + p] = vfmaq_n_f32(a[i * P + p], aqn_block2(k0, k1, qq + i * hd + b * LG_QK), dk * dq[i * nb + b]);
		}
	}
	LG_UNROLL
	for (int i = 0; i < H; i++) {
		LG_UNROLL
		for (int p = 0; p < P; p++) s[i * n_kv + p] = scale * vaddvq_f32(a[i * P + p]);
	}
}

// aqn_score_tile for the g heads at n (4 or 1) positions: four heads by two positions,
// two by four, one by four, or one position at a time.
AQN void aqn_scores(const int n, int64_t g, const int8_t *qq, const float *dq, int64_t nb, int64_t hd,
                    const uint8_t *const *kr, float scale, float *s, int64_t n_kv) {
	const int P4 = n == 4 ? 2 : 1, P2 = n == 4 ? 4 : 1;
	int64_t i = 0;
	for (; i + 4 <= g; i += 4)
		for (int p = 0; p < n; p += P4) aqn_score_tile(P4, 4, qq + i * hd, dq + i * nb, nb, hd, kr + p, scale, s + i * n_kv + p, n_kv);
	if (i + 2 <= g) {
		aqn_score_tile(P2, 2, qq + i * hd, dq + i * nb, nb, hd, kr, scale, s + i * n_kv, n_kv);
		i += 2;
	}
	if (i < g) aqn_score_tile(P2, 1, qq + i * hd, dq + i * nb, nb, hd, kr, scale, s + i * n_kv, n_kv);
}

// out[i*vhd + 4w ..] += p_i[t] * v_t's columns 4w .. for t in [t0, t1), heads i < H (p_i
// = s + i*n_kv), column vectors w < W (16: two blocks, 8: one, 4: half of one). v is at
// the tile's first block, off bytes into its quants; out at the tile's column.
AQN void aqn_v_tile(const int H, const int W, const float *s, int64_t n_kv, const uint8_t *v, int64_t off,
                    int64_t v_stride, const int32_t *rows, int64_t t0, int64_t t1, float *out, int64_t vhd, int64_t pf) {
	float32x4_t acc[16];
	en_tile_load(H, W, acc, out, vhd);
	for (int64_t t = t0; t < t1; t++) {
		const uint8_t *vt = v + EROW(rows, t) * v_stride;
		if (pf && t + pf < n_kv) elem_prefetch(v + EROW(rows, t + pf) * v_stride, vhd / LG_QK * AQ8_BLOCK); // the next run
		LG_UNROLL
		for (int c = 0; c < W / 4; c++) { // 16 columns: half a block
			const uint8_t *vb = vt + c / 2 * AQ8_BLOCK;
			const float dv = lg_h2f(lg_rd16(vb));
			float32x4_t x[4];
			aqn_widen16(x, vb + 2 + off + c % 2 * 16);
			LG_UNROLL
			for (int i = 0; i < H; i++) {
				const float p = s[i * n_kv + t] * dv;
				LG_UNROLL
				for (int w = 0; w < 4; w++) acc[i * W + 4 * c + w] = vfmaq_n_f32(acc[i * W + 4 * c + w], x[w], p);
			}
		}
	}
	en_tile_store(H, W, acc, out, vhd);
}

// aqn_v_tile over all the columns for H <= 4 heads (an elem_vrun), 4W at a time (H*W <=
// 16).
static void aqn_v_run(int H, const float *s, int64_t n_kv, const void *vp, int64_t v_stride, const int32_t *rows,
                      int64_t t0, int64_t t1, float *out, int64_t vhd, int64_t pf) {
	const uint8_t *v = (const uint8_t *)vp;
	const int64_t nvec = vhd / 4; // a multiple of 8
	const int wmax = H == 1 ? 16 : H == 2 ? 8 : 4;
	for (int64_t c = 0; c < nvec;) {
		const int W = wmax <= nvec - c ? wmax : 8;
		const uint8_t *vc = v + c / 8 * AQ8_BLOCK;
		const int64_t off = c % 8 * 4;
		float *oc = out + 4 * c;
		switch (H * 32 + W) {
#define AQN_V(h, w) \
	case h * 32 + w: aqn_v_tile(h, w, s, n_kv, vc, off, v_stride, rows, t0, t1, oc, vhd, c ? 0 : pf); break;
			AQN_V(1, 16) AQN_V(1, 8) AQN_V(2, 8) AQN_V(3, 4) AQN_V(4, 4)
#undef AQN_V
		}
		c += W;
	}
}

void attnq8_group_neon(const float *q, int64_t g, const uint8_t *k, int64_t k_stride, const uint8_t *v,
                       int64_t v_stride, const int32_t *rows, int64_t n_kv, int64_t head_dim, int64_t v_head_dim,
                       float scale, float *out, float *scratch) {
	const int64_t hd = head_dim, nb = hd / LG_QK, vhd = v_head_dim;
	const aq8_scratch sc = attnq8_prepare(q, g, n_kv, hd, scratch);
	float *s = sc.s, *dq = sc.dq;
	const int8_t *qq = sc.qq;

	int64_t t = 0;
	for (; t + 4 <= n_kv; t += 4) {
		const uint8_t *kr[4];
		for (int j = 0; j < 4; j++) kr[j] = k + EROW(rows, t + j) * k_stride;
		elem_prefetch_run(t, 4, n_kv, rows, v, v_stride, vhd / LG_QK * AQ8_BLOCK);
		aqn_scores(4, g, qq, dq, nb, hd, kr, scale, s + t, n_kv);
	}
	for (; t < n_kv; t++) {
		const uint8_t *kt = k + EROW(rows, t) * k_stride;
		aqn_scores(1, g, qq, dq, nb, hd, &kt, scale, s + t, n_kv);
	}

	// softmax: max, exp, sum in double (elem_neon.c), then p = e * (float)(1/sum)
	for (int64_t i = 0; i < g; i++) {
		float *si = s + i * n_kv;
		const float inv = elem_softmax_exp_neon(si, n_kv);
		for (t = 0; t + 4 <= n_kv; t += 4) vst1q_f32(si + t, vmulq_n_f32(vld1q_f32(si + t), inv));
		for (; t < n_kv; t++) si[t] = si[t] * inv;
	}

	// out = sum_t p_t v_t: runs of positions (about 16 KiB of V), heads four at a time
	elem_v_runs(aqn_v_run, g, s, n_kv, v, v_stride, rows, out, vhd, vhd / LG_QK * AQ8_BLOCK);
}

#endif
