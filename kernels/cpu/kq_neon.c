// kq_neon.c: the K-quant kernels on aarch64 Advanced SIMD. With __ARM_FEATURE_DOTPROD
// (e.g. -march=armv8.2-a+dotprod, Apple targets) the int8 products use vdotq_s32;
// otherwise vmull_s8/vmlal_high_s8 to int16 and vmlal to int32. Same shape as the x86
// paths (kq.h): the unsigned quants of a sub-block of 16 times the Q8_K quants, times
// the sub-block scale, summed exactly in int32 per super-block; the offsets (Q3_K, Q6_K)
// and mins (Q2_K, Q4_K, Q5_K) from the bsums; one float step per super-block.
//   - gemv (nx == 1): one weight row at a time, blocks decoded in registers;
//   - gemm: blocks decoded once into kq_block for two weight rows, 2x4 register tiles.
#include "kq.h"

#if defined(__aarch64__)
#include <arm_neon.h>

#define KQ_NEON_INLINE static inline __attribute__((always_inline))

// The quants of elements 128h + 16i .. +15 (i = 0..7) of block b of type t.
KQ_NEON_INLINE void kq_neon_half(int t, const uint8_t *b, int h, uint8x16_t q[8]) {
	const uint8x16_t m3 = vdupq_n_u8(3), m4 = vdupq_n_u8(0x0f);
	switch (t) {
	case EMBER_Q2_K:
	case EMBER_Q3_K: {
		const uint8_t *qs = b + (t == EMBER_Q2_K ? 16 : 32) + 32 * h;
		const uint8x16_t v0 = vld1q_u8(qs), v1 = vld1q_u8(qs + 16);
		q[0] = vandq_u8(v0, m3), q[1] = vandq_u8(v1, m3);
		q[2] = vandq_u8(vshrq_n_u8(v0, 2), m3), q[3] = vandq_u8(vshrq_n_u8(v1, 2), m3);
		q[4] = vandq_u8(vshrq_n_u8(v0, 4), m3), q[5] = vandq_u8(vshrq_n_u8(v1, 4), m3);
		q[6] = vshrq_n_u8(v0, 6), q[7] = vshrq_n_u8(v1, 6);
		if (t == EMBER_Q3_K) { // + 4 where bit 4h + s of hmask[l] is set
			const uint8x16_t h0 = vld1q_u8(b), h1 = vld1q_u8(b + 16), four = vdupq_n_u8(4);
			for (int s = 0; s < 4; s++) {
				const uint8x16_t bit = vdupq_n_u8((uint8_t)(1 << (4 * h + s)));
				q[2 * s] = vorrq_u8(q[2 * s], vandq_u8(vtstq_u8(h0, bit), four));
				q[2 * s + 1] = vorrq_u8(q[2 * s + 1], vandq_u8(vtstq_u8(h1, bit), four));
			}
		}
		break;
	}
	case EMBER_Q4_K:
	case EMBER_Q5_K: {
		const uint8_t *qs = b + (t == EMBER_Q5_K ? 48 : 16) + 64 * h;
		for (int c = 0; c < 2; c++) { // 32-byte chunk 2h + c: elements 64(2h+c) + [0, 64)
			const uint8x16_t v0 = vld1q_u8(qs + 32 * c), v1 = vld1q_u8(qs + 32 * c + 16);
			q[4 * c + 0] = vandq_u8(v0, m4), q[4 * c + 1] = vandq_u8(v1, m4);
			q[4 * c + 2] = vshrq_n_u8(v0, 4), q[4 * c + 3] = vshrq_n_u8(v1, 4);
		}
		if (t == EMBER_Q5_K) { // + 16 where bit 2c + hi of qh[l] is set
			const uint8x16_t h0 = vld1q_u8(b + 16), h1 = vld1q_u8(b + 32), sixteen = vdupq_n_u8(16);
			for (int k = 0; k < 4; k++) { // q[2k], q[2k+1]: bit 4h + k
				const uint8x16_t bit = vdupq_n_u8((uint8_t)(1 << (4 * h + k)));
				q[2 * k] = vorrq_u8(q[2 * k], vandq_u8(vtstq_u8(h0, bit), sixteen));
				q[2 * k + 1] = vorrq_u8(q[2 * k + 1], vandq_u8(vtstq_u8(h1, bit), sixteen));
			}
		}
		break;
	}
	default: { // Q6_K
		const uint8_t *ql = b + 64 * h, *qh = b + 128 + 32 * h;
		const uint8x16_t l0 = vld1q_u8(ql), l1 = vld1q_u8(ql + 16), l2 = vld1q_u8(ql + 32), l3 = vld1q_u8(ql + 48);
		const uint8x16_t h0 = vld1q_u8(qh), h1 = vld1q_u8(qh + 16), m30 = vdupq_n_u8(0x30);
		q[0] = vorrq_u8(vandq_u8(l0, m4), vandq_u8(vshlq_n_u8(h0, 4), m30));
		q[1] = vorrq_u8(vandq_u8(l1, m4), vandq_u8(vshlq_n_u8(h1, 4), m30));
		q[2] = vorrq_u8(vandq_u8(l2, m4), vandq_u8(vshlq_n_u8(h0, 2), m30));
		q[3] = vorrq_u8(vandq_u8(l3, m4), vandq_u8(vshlq_n_u8(h1, 2), m30));
		q[4] = vorrq_u8(vshrq_n_u8(l0, 4), vandq_u8(h0, m30));
		q[5] = vorrq_u8(vshrq_n_u8(l1, 4), vandq_u8(h1, m30));
		q[6] = vorrq_u8(vshrq_n_u8(l2, 4), vandq_u8(vshrq_n_u8(h0, 2), m30));
		q[7] = vorrq_u8(vshrq_n_u8(l3, 4), vandq_u8(vshrq_n_u8(h1, 2), m30));
		break;
	}
	}
}

// The scales, offsets and floats of block b (the scalar decoding; 16 values each).
KQ_NEON_INLINE void kq_neon_meta(int t, const uint8_t *b, int16_t sc[16], int16_t mn[16], float *d, float *dmn) {
	switch (t) {
	case EMBER_Q2_K:
		for (int j = 0; j < 16; j++) sc[j] = b[j] & 0x0f, mn[j] = b[j] >> 4;
		*d = kq_h2f(kq_rd16(b + 80));
		*dmn = kq_h2f(kq_rd16(b + 82));
		break;
	case EMBER_Q3_K: {
		uint64_t s6[2];
		kq_q3_scales(b + 96, s6);
		for (int j = 0; j < 16; j++) {
			sc[j] = (int16_t)((s6[j / 8] >> (8 * (j % 8))) & 0xff) - 32;
			mn[j] = (int16_t)(4 * sc[j]);
		}
		*d = *dmn = kq_h2f(kq_rd16(b + 108));
		break;
	}
	case EMBER_Q4_K:
	case EMBER_Q5_K: {
		uint32_t s4[2], m4[2];
		kq_k4_scales(b + 4, s4, m4);
		for (int j = 0; j < 16; j++) {
			int s = j / 2;
			sc[j] = (s4[s / 4] >> (8 * (s % 4))) & 0xff;
			mn[j] = (m4[s / 4] >> (8 * (s % 4))) & 0xff;
		}
		*d = kq_h2f(kq_rd16(b));
		*dmn = kq_h2f(kq_rd16(b + 2));
		break;
	}
	default:
		for (int j = 0; j < 16; j++) sc[j] = (int8_t)b[192 + j], mn[j] = (int16_t)(32 * sc[j]);
		*d = *dmn = kq_h2f(kq_rd16(b + 208));
		break;
	}
}

#define KQ_HAS_MINS(t) ((t) == EMBER_Q2_K || (t) == EMBER_Q4_K || (t) == EMBER_Q5_K)

// acc + sc * sum of the 16 products q[i]*x[i] (q unsigned, < 64; x signed).
KQ_NEON_INLINE int32x4_t kq_neon_dot16(int32x4_t acc, uint8x16_t q, int8x16_t x, int16_t sc) {
#if defined(__ARM_FEATURE_DOTPROD)
	int32x4_t t = vdotq_s32(vdupq_n_s32(0), vreinterpretq_s8_u8(q), x);
	return vmlaq_n_s32(acc, t, sc);
#else
	int8x16_t qs = vreinterpretq_s8_u8(q);
	int16x8_t p = vmull_s8(vget_low_s8(qs), vget_low_s8(x));
	p = vmlal_high_s8(p, qs, x); // |pair sums| <= 2*63*128: no int16 overflow
	acc = vmlal_n_s16(acc, vget_low_s16(p), sc);
	return vmlal_high_n_s16(acc, p, sc);
#endif
}

// M = sum_s mn[s] * bsums[s].
KQ_NEON_INLINE int32_t kq_neon_msum(const int16_t mn[16], const uint8_t *xb) {
	const int16x8_t b0 = vreinterpretq_s16_u8(vld1q_u8(xb + KQ_Q8K_BSUMS));
	const int16x8_t b1 = vreinterpretq_s16_u8(vld1q_u8(xb + KQ_Q8K_BSUMS + 16));
	const int16x8_t m0 = vld1q_s16(mn), m1 = vld1q_s16(mn + 8);
	int32x4_t s = vmull_s16(vget_low_s16(m0), vget_low_s16(b0));
	s = vmlal_high_s16(s, m0, b0);
	s = vmlal_s16(s, vget_low_s16(m1), vget_low_s16(b1));
	s = vmlal_high_s16(s, m1, b1);
	return vaddvq_s32(s);
}

// ---- gemv ----

// The dot of block b with the Q8_K block xb, the integer parts exact.
KQ_NEON_INLINE float kq_neon_block(int t, const uint8_t *b, const uint8_t *xb) {
	int16_t sc[16], mn[16];
	float d, dmn;
	kq_neon_meta(t, b, sc, mn, &d, &dmn);
	int32x4_t acc = vdupq_n_s32(0);
	for (int h = 0; h < 2; h++) {
		uint8x16_t q[8];
		kq_neon_half(t, b, h, q);
		for (int i = 0; i < 8; i++) {
			// element 128h + 16i: sub-block 8h + i
			const int8x16_t x = vld1q_s8((const int8_t *)(xb + KQ_Q8K_QS + 128 * h + 16 * i));
			acc = kq_neon_dot16(acc, q[i], x, sc[8 * h + i]);
		}
	}
	const int32_t I = vaddvq_s32(acc), M = kq_neon_msum(mn, xb);
	const float dx = kq_rdf32(xb);
	if (KQ_HAS_MINS(t)) return d * dx * (float)I - dmn * dx * (float)M;
	return d * dx * (float)(I - M);
}

// One weight row at a time (as the x86 paths: interleaving two rows' streams measured
// slower from DRAM there), prefetching a block 2 KiB ahead within the rows being read.
KQ_NEON_INLINE void kq_neon_gemv(int t, const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t nb, int64_t r0,
                                 int64_t r1, float *dst) {
	const int64_t bb = kq_wbytes(t);
	const uint8_t *wend = w + r1 * wrb;
	for (int64_t r = r0; r < r1; r++) {
		const uint8_t *wr = w + r * wrb;
		float s = 0;
		for (int64_t b = 0; b < nb; b++) {
			const uint8_t *p = wr + b * bb + 2048;
			for (int64_t o = 0; o < bb; o += 64)
				if (p + o < wend) __builtin_prefetch(p + o);
			s += kq_neon_block(t, wr + b * bb, x + b * KQ_Q8K_BYTES);
		}
		dst[r] = s;
	}
}

// ---- gemm ----

static void kq_neon_unpack(int t, const uint8_t *w, int64_t n, kq_block *u) {
	for (int64_t b = 0; b < n; b++, w += kq_wbytes(t), u++) {
		kq_neon_meta(t, w, u->sc, u->mn, &u->d, &u->dmn);
		for (int h = 0; h < 2; h++) {
			uint8x16_t q[8];
			kq_neon_half(t, w, h, q);
			for (int i = 0; i < 8; i++) vst1q_u8(u->q + 128 * h + 16 * i, q[i]);
		}
	}
}

// [sum a, sum b, sum c, sum e], exact.
KQ_NEON_INLINE int32x4_t kq_neon_sum4(int32x4_t a, int32x4_t b, int32x4_t c, int32x4_t e) {
	return vpaddq_s32(vpaddq_s32(a, b), vpaddq_s32(c, e));
}

// NR (<= 2) weight rows u[r*ub + b] by NX (<= 4) activation rows: dst[j*ldd + r] (+)= dot.
KQ_NEON_INLINE void kq_neon_tile(int NR, int NX, int mins, const kq_block *u, int64_t ub, const uint8_t *x,
                                 int64_t xrb, int64_t nb, float *dst, int64_t ldd, int add) {
	float32x4_t facc[2] = {vdupq_n_f32(0), vdupq_n_f32(0)};
	for (int64_t b = 0; b < nb; b++) {
		const uint8_t *xb = x + b * KQ_Q8K_BYTES;
		int32x4_t acc[2][4];
		for (int r = 0; r < 2; r++)
			for (int j = 0; j < 4; j++) acc[r][j] = vdupq_n_s32(0);
		for (int s = 0; s < 16; s++) {
			uint8x16_t wv[2];
			for (int r = 0; r < NR; r++) wv[r] = vld1q_u8(u[r * ub + b].q + 16 * s);
			for (int j = 0; j < NX; j++) {
				const int8x16_t xv = vld1q_s8((const int8_t *)(xb + j * xrb + KQ_Q8K_QS + 16 * s));
				for (int r = 0; r < NR; r++) acc[r][j] = kq_neon_dot16(acc[r][j], wv[r], xv, u[r * ub + b].sc[s]);
			}
		}
		float dxs[4] = {0, 0, 0, 0};
		for (int j = 0; j < NX; j++) dxs[j] = kq_rdf32(xb + j * xrb);
		const float32x4_t dx = vld1q_f32(dxs);
		for (int r = 0; r < NR; r++) {
			const kq_block *ur = u + r * ub + b;
			int32_t m[4] = {0, 0, 0, 0};
			for (int j = 0; j < NX; j++) m[j] = kq_neon_msum(ur->mn, xb + j * xrb);
			const int32x4_t I = kq_neon_sum4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]), M = vld1q_s32(m);
			if (mins) {
				facc[r] = vaddq_f32(facc[r], vmulq_f32(vcvtq_f32_s32(I), vmulq_n_f32(dx, ur->d)));
				facc[r] = vsubq_f32(facc[r], vmulq_f32(vcvtq_f32_s32(M), vmulq_n_f32(dx, ur->dmn)));
			} else {
				facc[r] = vaddq_f32(facc[r], vmulq_f32(vcvtq_f32_s32(vsubq_s32(I, M)), vmulq_n_f32(dx, ur->d)));
			}
		}
	}
	for (int r = 0; r < NR; r++) {
		float out[4];
		vst1q_f32(out, facc[r]);
		for (int j = 0; j < NX; j++) {
			float *p = dst + j * ldd + r;
			*p = add ? *p + out[j] : out[j];
		}
	}
}

#define KQ_NEON_TILE(NR, NX)                                                                       \
	static void kq_neon_tile_##NR##x##NX(int mins, const kq_block *u, int64_t ub, const uint8_t *x, int64_t xrb, \
	                                     int64_t nb, float *dst, int64_t ldd, int add) {           \
		kq_neon_tile(NR, NX, mins, u, ub, x, xrb, nb, dst, ldd, add);                          \
	}
KQ_NEON_TILE(1, 1) KQ_NEON_TILE(1, 2) KQ_NEON_TILE(1, 3) KQ_NEON_TILE(1, 4)
KQ_NEON_TILE(2, 1) KQ_NEON_TILE(2, 2) KQ_NEON_TILE(2, 3) KQ_NEON_TILE(2, 4)

static void (*const kq_neon_tiles[2][4])(int, const kq_block *, int64_t, const uint8_t *, int64_t, int64_t, float *,
                                         int64_t, int) = {
	{kq_neon_tile_1x1, kq_neon_tile_1x2, kq_neon_tile_1x3, kq_neon_tile_1x4},
	{kq_neon_tile_2x1, kq_neon_tile_2x2, kq_neon_tile_2x3, kq_neon_tile_2x4},
};

void ember_kq_gemm_neon(int t, const uint8_t *w, int64_t wrb, const uint8_t *xq, int64_t xrb,
                        int64_t nx, int64_t nb, int64_t r0, int64_t r1, float *dst, int64_t ldd) {
	if (nx == 1) {
		switch (t) { // constant types, so each gemv is specialized
		case EMBER_Q2_K: kq_neon_gemv(EMBER_Q2_K, w, wrb, xq, nb, r0, r1, dst); return;
		case EMBER_Q3_K: kq_neon_gemv(EMBER_Q3_K, w, wrb, xq, nb, r0, r1, dst); return;
		case EMBER_Q4_K: kq_neon_gemv(EMBER_Q4_K, w, wrb, xq, nb, r0, r1, dst); return;
		case EMBER_Q5_K: kq_neon_gemv(EMBER_Q5_K, w, wrb, xq, nb, r0, r1, dst); return;
		default: kq_neon_gemv(EMBER_Q6_K, w, wrb, xq, nb, r0, r1, dst); return;
		}
	}
	enum { KB = 8, XC = 64 };
	const int64_t bb = kq_wbytes(t);
	const int mins = KQ_HAS_MINS(t);
	kq_block ubuf[2 * KB];
	for (int64_t i0 = 0; i0 < nx; i0 += XC) {
		const int64_t ni = nx - i0 < XC ? nx - i0 : XC;
		for (int64_t r = r0; r < r1; r += 2) {
			const int nr = r1 - r >= 2 ? 2 : 1;
			for (int64_t k0 = 0; k0 < nb; k0 += KB) {
				const int64_t kn = nb - k0 < KB ? nb - k0 : KB;
				for (int i = 0; i < nr; i++) kq_neon_unpack(t, w + (r + i) * wrb + k0 * bb, kn, ubuf + i * KB);
				for (int64_t j = 0; j < ni; j += 4) {
					const int nj = ni - j >= 4 ? 4 : (int)(ni - j);
					kq_neon_tiles[nr - 1][nj - 1](mins, ubuf, KB, xq + (i0 + j) * xrb + k0 * KQ_Q8K_BYTES, xrb, kn,
					                              dst + (i0 + j) * ldd + r, ldd, k0 > 0);
				}
			}
		}
	}
}

// ---- dequantize ----

void ember_kq_dequant_neon(int t, const uint8_t *x, float *y, int64_t nblocks) {
	if (t == EMBER_Q8_K) {
		for (int64_t ib = 0; ib < nblocks; ib++, x += KQ_Q8K_BYTES, y += KQ_QK) {
			const float d = kq_rdf32(x);
			for (int j = 0; j < KQ_QK; j += 8) {
				const int16x8_t q = vmovl_s8(vld1_s8((const int8_t *)(x + KQ_Q8K_QS + j)));
				vst1q_f32(y + j, vmulq_n_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(q))), d));
				vst1q_f32(y + j + 4, vmulq_n_f32(vcvtq_f32_s32(vmovl_high_s16(q)), d));
			}
		}
		return;
	}
	const int off = t == EMBER_Q3_K ? 4 : t == EMBER_Q6_K ? 32 : 0;
	kq_block u;
	for (int64_t ib = 0; ib < nblocks; ib++, x += kq_wbytes(t), y += KQ_QK) {
		kq_neon_unpack(t, x, 1, &u);
		for (int s = 0; s < 16; s++) {
			// y = (d*sc) * (q - off) - dmin*m, as quant.Dequantize rounds it (no fusing: kq.h)
			const float32x4_t dl = vdupq_n_f32(u.d * (float)u.sc[s]);
			const float32x4_t ml = vdupq_n_f32(off ? 0.0f : u.dmn * (float)u.mn[s]);
			const int16x8_t q0 = vsubq_s16(vreinterpretq_s16_u16(vmovl_u8(vld1_u8(u.q + 16 * s))), vdupq_n_s16((int16_t)off));
			const int16x8_t q1 = vsubq_s16(vreinterpretq_s16_u16(vmovl_u8(vld1_u8(u.q + 16 * s + 8))), vdupq_n_s16((int16_t)off));
			const int32x4_t qi[4] = {vmovl_s16(vget_low_s16(q0)), vmovl_high_s16(q0), vmovl_s16(vget_low_s16(q1)),
			                         vmovl_high_s16(q1)};
			for (int k = 0; k < 4; k++) {
				float32x4_t p = vmulq_f32(dl, vcvtq_f32_s32(qi[k]));
				vst1q_f32(y + 16 * s + 4 * k, off ? p : vsubq_f32(p, ml));
			}
		}
	}
}

// ---- Q8_K quantizer (bit-exact with the scalar one) ----

void ember_kq_quantize_q8k_neon(const float *x, uint8_t *y, int64_t nblocks) {
	for (int64_t ib = 0; ib < nblocks; ib++, x += KQ_QK, y += KQ_Q8K_BYTES) {
		// amax as the reference: a lane takes |x| only when larger (NaN never is)
		float32x4_t mx = vdupq_n_f32(0);
		for (int j = 0; j < KQ_QK; j += 4) {
			const float32x4_t a = vabsq_f32(vld1q_f32(x + j));
			mx = vbslq_f32(vcgtq_f32(a, mx), a, mx);
		}
		float amax = 0, maxv = 0;
		float lanes[4];
		vst1q_f32(lanes, mx);
		for (int l = 0; l < 4; l++)
			if (amax < lanes[l]) amax = lanes[l];
		if (amax == 0) {
			memset(y, 0, KQ_Q8K_BYTES);
			continue;
		}
		for (int j = 0; j < KQ_QK; j++) { // the first element of that magnitude
			uint32_t bits;
			memcpy(&bits, &x[j], 4);
			bits &= 0x7fffffffu;
			float a;
			memcpy(&a, &bits, 4);
			if (a == amax) {
				maxv = x[j];
				break;
			}
		}
		const float iscale = -127.0f / maxv;
		const float32x4_t magic = vdupq_n_f32(12582912.0f);
		const int32x4_t mant = vdupq_n_s32(0x007fffff), bias = vdupq_n_s32(0x00400000), c127 = vdupq_n_s32(127);
		int8_t *q = (int8_t *)(y + KQ_Q8K_QS);
		for (int g = 0; g < 16; g++) {
			int16x8_t h[2];
			for (int k = 0; k < 4; k++) {
				// nearest_int(iscale*x): product rounded, then the 1.5*2^23 trick, as the reference
				const float32x4_t p = vmulq_n_f32(vld1q_f32(x + 16 * g + 4 * k), iscale);
				int32x4_t i = vsubq_s32(vandq_s32(vreinterpretq_s32_f32(vaddq_f32(p, magic)), mant), bias);
				i = vminq_s32(i, c127);
				const int16x4_t n = vmovn_s32(i); // truncating narrows: (int8) of the int32
				h[k / 2] = k % 2 ? vcombine_s16(vget_low_s16(h[k / 2]), n) : vcombine_s16(n, n);
			}
			const int8x16_t b = vcombine_s8(vmovn_s16(h[0]), vmovn_s16(h[1]));
			vst1q_s8(q + 16 * g, b);
			const int16_t bsum = (int16_t)vaddlvq_s8(b);
			memcpy(y + KQ_Q8K_BSUMS + 2 * g, &bsum, 2);
		}
		const float d = 1.0f / iscale;
		memcpy(y, &d, 4);
	}
}

#endif
