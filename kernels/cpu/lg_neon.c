// lg_neon.c: aarch64 Advanced SIMD paths of the legacy-quant and float kernels.
//
// Integer dots use sdot (vdotq_s32) where the compiler targets the dotprod extension and
// an equivalent vmull/vpaddl sequence otherwise, so both give each int32 lane the sum of
// its four byte products. Weights are used signed (q - 8 for Q4_0, q - 16 for Q5_0; the
// _1 types' 0..31 fit too), so no offset corrections are needed.
//
// gemm: nx <= 3 streams the weights in their GGUF layout, 4 rows at a time; larger nx uses
// tiles as lg_avx2.c does, with groups of 4 blocks: 16-byte vector e (0..7) of a group
// holds, in lane l, elements 4e..4e+3 of block l. Stack use of the tiled gemm: 40 KB of
// weight tile and 10 KB of activation tile.
#include "lg.h"

#if defined(__aarch64__)
#include <arm_neon.h>

#define LGN static inline __attribute__((always_inline))

// acc + per-lane sums of the 4 byte products of a and b.
LGN int32x4_t ln_dot(int32x4_t acc, int8x16_t a, int8x16_t b) {
#if defined(__ARM_FEATURE_DOTPROD)
	return vdotq_s32(acc, a, b);
#else
	const int32x4_t lo = vpaddlq_s16(vmull_s8(vget_low_s8(a), vget_low_s8(b)));
	const int32x4_t hi = vpaddlq_s16(vmull_high_s8(a, b));
	return vaddq_s32(acc, vpaddq_s32(lo, hi));
#endif
}

LGN float ln_h2f(const uint8_t *p) { return lg_h2f(lg_rd16(p)); }

LGN int ln_is1(int t) { return t == EMBER_Q4_1 || t == EMBER_Q5_1; }

// Byte j (0..15) is 0x10 when bit j of the 16 bits h is set.
LGN uint8x16_t ln_hbits16(uint32_t h) {
	const uint8x16_t v = vcombine_u8(vdup_n_u8((uint8_t)h), vdup_n_u8((uint8_t)(h >> 8)));
	const uint8x16_t bit = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
	return vandq_u8(vtstq_u8(v, bit), vdupq_n_u8(0x10));
}

// The 32 quants of a weight block as signed bytes: elements 0..15 in *a, 16..31 in *b.
LGN void ln_wquants(int t, const uint8_t *blk, int8x16_t *a, int8x16_t *b) {
	if (t == EMBER_Q8_0) {
		*a = vld1q_s8((const int8_t *)(blk + 2));
		*b = vld1q_s8((const int8_t *)(blk + 18));
		return;
	}
	const int qo = t == EMBER_Q4_0 ? 2 : t == EMBER_Q4_1 ? 4 : t == EMBER_Q5_0 ? 6 : 8;
	const uint8x16_t q = vld1q_u8(blk + qo);
	uint8x16_t lo = vandq_u8(q, vdupq_n_u8(0x0f)), hi = vshrq_n_u8(q, 4);
	if (t == EMBER_Q5_0 || t == EMBER_Q5_1) {
		const uint32_t qh = lg_rd32(blk + (t == EMBER_Q5_0 ? 2 : 4));
		lo = vorrq_u8(lo, ln_hbits16(qh));
		hi = vorrq_u8(hi, ln_hbits16(qh >> 16));
	}
	const int off = t == EMBER_Q4_0 ? 8 : t == EMBER_Q5_0 ? 16 : 0;
	*a = vsubq_s8(vreinterpretq_s8_u8(lo), vdupq_n_s8((int8_t)off));
	*b = vsubq_s8(vreinterpretq_s8_u8(hi), vdupq_n_s8((int8_t)off));
}

// ================================================================ quantize

static void ln_quant_q8(const float *x, uint8_t *y, int64_t nb, int q81) {
	const int bs = q81 ? 36 : 34, qo = q81 ? 4 : 2;
	for (int64_t ib = 0; ib < nb; ib++) {
		const float *xb = x + ib * LG_QK;
		uint8_t *b = y + ib * bs;
		float32x4_t v[8];
		float32x4_t m = vdupq_n_f32(0);
		for (int j = 0; j < 8; j++) {
			v[j] = vld1q_f32(xb + 4 * j);
			m = vmaxq_f32(m, vabsq_f32(v[j]));
		}
		const float amax = vmaxvq_f32(m);
		const float d = amax / 127.0f, id = d != 0 ? 1.0f / d : 0.0f;
		if (!(id <= 3.4e38f) || !(amax <= 3.4e38f)) { // 1/d overflowed, inf or NaN: the scalar code
			lg_quant_q8_block(xb, b, q81);
			continue;
		}
		lg_wr16(b, lg_f2h(d));
		int32x4_t sum = vdupq_n_s32(0);
		int16x8_t h[4];
		for (int j = 0; j < 4; j++) {
			// vcvtaq rounds to nearest, ties away from zero: C's roundf
			const int32x4_t i0 = vcvtaq_s32_f32(vmulq_n_f32(v[2 * j], id));
			const int32x4_t i1 = vcvtaq_s32_f32(vmulq_n_f32(v[2 * j + 1], id));
			sum = vaddq_s32(sum, vaddq_s32(i0, i1));
			h[j] = vcombine_s16(vqmovn_s32(i0), vqmovn_s32(i1));
		}
		vst1q_s8((int8_t *)(b + qo), vcombine_s8(vqmovn_s16(h[0]), vqmovn_s16(h[1])));
		vst1q_s8((int8_t *)(b + qo + 16), vcombine_s8(vqmovn_s16(h[2]), vqmovn_s16(h[3])));
		if (q81) lg_wr16(b + 2, lg_f2h((float)vaddvq_s32(sum) * d));
	}
}

// 4 floats to halves, ties to even; NaN becomes sign|0x7e00 as quant.FP32ToFP16.
LGN uint16x4_t ln_f2h4(float32x4_t v) {
	uint16x4_t h = vreinterpret_u16_f16(vcvt_f16_f32(v));
	const uint16x4_t nan = vmovn_u32(vmvnq_u32(vceqq_f32(v, v)));
	const uint16x4_t canon = vorr_u16(vand_u16(h, vdup_n_u16(0x8000)), vdup_n_u16(0x7e00));
	return vbsl_u16(nan, canon, h);
}

int lg_quantize_neon(int vdt, const float *x, void *yv, int64_t nrows, int64_t n) {
	uint8_t *y = (uint8_t *)yv;
	const int64_t total = nrows * n;
	switch (vdt) {
	case EMBER_Q8_0: case EMBER_Q8_1:
		ln_quant_q8(x, y, total / LG_QK, vdt == EMBER_Q8_1);
		return 0;
	case EMBER_F16: {
		int64_t i = 0;
		for (; i + 4 <= total; i += 4) vst1_u16((uint16_t *)(void *)(y + 2 * i), ln_f2h4(vld1q_f32(x + i)));
		for (; i < total; i++) lg_wr16(y + 2 * i, lg_f2h(x[i]));
		return 0;
	}
	}
	return lg_quant_scalar(vdt, x, y, nrows, n);
}

// ================================================================ dequantize

int lg_dequantize_neon(int t, const void *xv, float *y, int64_t n) {
	const uint8_t *x = (const uint8_t *)xv;
	switch (t) {
	case EMBER_F16: {
		int64_t i = 0;
		for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16((const uint16_t *)(const void *)(x + 2 * i)))));
		for (; i < n; i++) y[i] = lg_h2f(lg_rd16(x + 2 * i));
		return 0;
	}
	case EMBER_Q4_0: case EMBER_Q5_0: case EMBER_Q8_0: {
		const int bs = lg_type_bytes(t);
		for (int64_t ib = 0; ib < n / LG_QK; ib++) {
			const uint8_t *b = x + ib * bs;
			int8x16_t q[2];
			ln_wquants(t, b, &q[0], &q[1]);
			const float d = ln_h2f(b);
			for (int h = 0; h < 2; h++) {
				const int16x8_t lo = vmovl_s8(vget_low_s8(q[h])), hi = vmovl_high_s8(q[h]);
				float *o = y + ib * LG_QK + 16 * h;
				vst1q_f32(o, vmulq_n_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo))), d));
				vst1q_f32(o + 4, vmulq_n_f32(vcvtq_f32_s32(vmovl_high_s16(lo)), d));
				vst1q_f32(o + 8, vmulq_n_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi))), d));
				vst1q_f32(o + 12, vmulq_n_f32(vcvtq_f32_s32(vmovl_high_s16(hi)), d));
			}
		}
		return 0;
	}
	}
	return lg_dequant_scalar(t, x, y, n);
}

// ================================================================ gemm: direct (decode)

#define LN_DIRECT_NX 3

LGN void ln_direct_q(const int T, const int NR, const int NX, const uint8_t *w, int64_t wrb, const uint8_t *x,
                     int64_t xrb, int64_t nb, float *dst, int64_t ldd) {
	const int wbs = lg_type_bytes(T), is1 = ln_is1(T), xbs = is1 ? 36 : 34, xqo = is1 ? 4 : 2;
	float32x4_t acc[3][4];
	float accm[3][4];
	for (int i = 0; i < NX; i++)
		for (int r = 0; r < NR; r++) acc[i][r] = vdupq_n_f32(0), accm[i][r] = 0;
	for (int64_t b = 0; b < nb; b++) {
		int8x16_t xa[3], xb[3];
		float dx[3], sx[3];
		for (int i = 0; i < NX; i++) {
			const uint8_t *p = x + i * xrb + b * xbs;
			xa[i] = vld1q_s8((const int8_t *)(p + xqo));
			xb[i] = vld1q_s8((const int8_t *)(p + xqo + 16));
			dx[i] = ln_h2f(p);
			if (is1) sx[i] = ln_h2f(p + 2);
		}
		for (int r = 0; r < NR; r++) {
			const uint8_t *p = w + r * wrb + b * wbs;
			__builtin_prefetch(p + 4 * wrb);
			int8x16_t wa, wb;
			ln_wquants(T, p, &wa, &wb);
			const float dw = ln_h2f(p), mw = is1 ? ln_h2f(p + 2) : 0;
			for (int i = 0; i < NX; i++) {
				const int32x4_t s = ln_dot(ln_dot(vdupq_n_s32(0), wa, xa[i]), wb, xb[i]);
				acc[i][r] = vfmaq_n_f32(acc[i][r], vcvtq_f32_s32(s), dw * dx[i]);
				if (is1) accm[i][r] += mw * sx[i];
			}
		}
	}
	for (int i = 0; i < NX; i++)
		for (int r = 0; r < NR; r++) dst[i * ldd + r] = vaddvq_f32(acc[i][r]) + accm[i][r];
}

// 4 floats of w (f16, bf16 or f32) at element i.
LGN float32x4_t ln_fload(int T, const uint8_t *p, int64_t i) {
	switch (T) {
	case EMBER_F16: return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16((const uint16_t *)(const void *)(p + 2 * i))));
	case EMBER_BF16: return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16((const uint16_t *)(const void *)(p + 2 * i)), 16));
	default: return vld1q_f32((const float *)(const void *)(p + 4 * i));
	}
}

LGN float ln_fscalar(int T, const uint8_t *p, int64_t i) {
	switch (T) {
	case EMBER_F16: return lg_h2f(lg_rd16(p + 2 * i));
	case EMBER_BF16: return lg_bf2f(lg_rd16(p + 2 * i));
	default: { float f; memcpy(&f, p + 4 * i, 4); return f; }
	}
}

// Float weights: NR rows (1..4) against NX activation rows (1..4).
LGN void ln_direct_f(const int T, const int NR, const int NX, const uint8_t *w, int64_t wrb, const uint8_t *x,
                     int64_t xrb, int64_t k, float *dst, int64_t ldd) {
	const int es = T == EMBER_F32 ? 4 : 2;
	float32x4_t acc[4][4];
	for (int i = 0; i < NX; i++)
		for (int r = 0; r < NR; r++) acc[i][r] = vdupq_n_f32(0);
	int64_t j = 0;
	for (; j + 4 <= k; j += 4) {
		float32x4_t xv[4];
		for (int i = 0; i < NX; i++) xv[i] = ln_fload(T, x + i * xrb, j);
		for (int r = 0; r < NR; r++) {
			__builtin_prefetch(w + r * wrb + es * j + 512);
			const float32x4_t wv = ln_fload(T, w + r * wrb, j);
			for (int i = 0; i < NX; i++) acc[i][r] = vfmaq_f32(acc[i][r], wv, xv[i]);
		}
	}
	for (int i = 0; i < NX; i++)
		for (int r = 0; r < NR; r++) {
			float s = vaddvq_f32(acc[i][r]);
			for (int64_t jj = j; jj < k; jj++) s += ln_fscalar(T, w + r * wrb, jj) * ln_fscalar(T, x + i * xrb, jj);
			dst[i * ldd + r] = s;
		}
}

#define LN_CASES(FN, T, KARG, MAXX)                                                               \
	switch (nr * 8 + nxx) {                                                                       \
	case 8 + 1: FN(T, 1, 1, wp, wrb, xp, xrb, KARG, dp, ldd); break;                              \
	case 8 + 2: FN(T, 1, 2, wp, wrb, xp, xrb, KARG, dp, ldd); break;                              \
	case 8 + 3: FN(T, 1, 3, wp, wrb, xp, xrb, KARG, dp, ldd); break;                              \
	case 16 + 1: FN(T, 2, 1, wp, wrb, xp, xrb, KARG, dp, ldd); break;                             \
	case 16 + 2: FN(T, 2, 2, wp, wrb, xp, xrb, KARG, dp, ldd); break;                             \
	case 16 + 3: FN(T, 2, 3, wp, wrb, xp, xrb, KARG, dp, ldd); break;                             \
	case 24 + 1: FN(T, 3, 1, wp, wrb, xp, xrb, KARG, dp, ldd); break;                             \
	case 24 + 2: FN(T, 3, 2, wp, wrb, xp, xrb, KARG, dp, ldd); break;                             \
	case 24 + 3: FN(T, 3, 3, wp, wrb, xp, xrb, KARG, dp, ldd); break;                             \
	case 32 + 1: FN(T, 4, 1, wp, wrb, xp, xrb, KARG, dp, ldd); break;                             \
	case 32 + 2: FN(T, 4, 2, wp, wrb, xp, xrb, KARG, dp, ldd); break;                             \
	case 32 + 3: FN(T, 4, 3, wp, wrb, xp, xrb, KARG, dp, ldd); break;                             \
	default:                                                                                      \
		if (MAXX == 4) {                                                                          \
			switch (nr) {                                                                         \
			case 1: FN(T, 1, MAXX, wp, wrb, xp, xrb, KARG, dp, ldd); break;                       \
			case 2: FN(T, 2, MAXX, wp, wrb, xp, xrb, KARG, dp, ldd); break;                       \
			case 3: FN(T, 3, MAXX, wp, wrb, xp, xrb, KARG, dp, ldd); break;                       \
			default: FN(T, 4, MAXX, wp, wrb, xp, xrb, KARG, dp, ldd); break;                      \
			}                                                                                     \
		}                                                                                         \
		break;                                                                                    \
	}

// The direct loop: x rows in groups of MAXX, weight rows in groups of 4 (rows blocked by
// 16 so the weights of a block stay in cache across the x groups).
#define LN_DIRECT_FN(NAME, FN, T, KARG, MAXX)                                                     \
	static void NAME(const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb, int64_t nx,    \
	                 int64_t kk, int64_t r0, int64_t r1, float *dst, int64_t ldd) {                \
		for (int64_t rb = r0; rb < r1; rb += 16) {                                                \
			const int64_t re = r1 - rb < 16 ? r1 : rb + 16;                                        \
			for (int64_t i0 = 0; i0 < nx; i0 += MAXX) {                                            \
				const int nxx = (int)(nx - i0 < MAXX ? nx - i0 : MAXX);                            \
				for (int64_t r = rb; r < re; r += 4) {                                             \
					const int nr = (int)(re - r < 4 ? re - r : 4);                                 \
					const uint8_t *wp = w + r * wrb, *xp = x + i0 * xrb;                           \
					float *dp = dst + i0 * ldd + r;                                                \
					LN_CASES(FN, T, KARG, MAXX)                                                    \
				}                                                                                  \
			}                                                                                      \
		}                                                                                          \
	}

LN_DIRECT_FN(ln_direct_q4_0, ln_direct_q, EMBER_Q4_0, kk / LG_QK, 3)
LN_DIRECT_FN(ln_direct_q4_1, ln_direct_q, EMBER_Q4_1, kk / LG_QK, 3)
LN_DIRECT_FN(ln_direct_q5_0, ln_direct_q, EMBER_Q5_0, kk / LG_QK, 3)
LN_DIRECT_FN(ln_direct_q5_1, ln_direct_q, EMBER_Q5_1, kk / LG_QK, 3)
LN_DIRECT_FN(ln_direct_q8_0, ln_direct_q, EMBER_Q8_0, kk / LG_QK, 3)
LN_DIRECT_FN(ln_direct_f16, ln_direct_f, EMBER_F16, kk, 4)
LN_DIRECT_FN(ln_direct_bf16, ln_direct_f, EMBER_BF16, kk, 4)
LN_DIRECT_FN(ln_direct_f32, ln_direct_f, EMBER_F32, kk, 4)

// ================================================================ gemm: tiled (prefill)

#define LN_G 4     // blocks per group
#define LN_RB 16   // weight rows per tile
#define LN_KCB 64  // blocks of k per tile
#define LN_TX 4    // activation rows per micro-kernel
#define LN_TR 2    // weight rows per micro-kernel

typedef struct {
	int8_t q[LN_RB][LN_KCB * LG_QK];
	float d[LN_RB][LN_KCB];
	float m[LN_RB][LN_KCB];
} ln_wtile;

typedef struct {
	int8_t q[LN_TX][LN_KCB * LG_QK];
	float d[LN_TX][LN_KCB];
	float s[LN_TX][LN_KCB];
} ln_xtile;

// Store 4 blocks (halves a[l] = elements 0..15, b[l] = 16..31 of block l) in the group
// layout at o: vector e lane l = dword e of block l.
LGN void ln_store_group(int8_t *o, const int8x16_t a[4], const int8x16_t b[4]) {
	for (int h = 0; h < 2; h++) {
		const int8x16_t *v = h ? b : a;
		const uint32x4_t t0 = vtrn1q_u32(vreinterpretq_u32_s8(v[0]), vreinterpretq_u32_s8(v[1]));
		const uint32x4_t t1 = vtrn2q_u32(vreinterpretq_u32_s8(v[0]), vreinterpretq_u32_s8(v[1]));
		const uint32x4_t t2 = vtrn1q_u32(vreinterpretq_u32_s8(v[2]), vreinterpretq_u32_s8(v[3]));
		const uint32x4_t t3 = vtrn2q_u32(vreinterpretq_u32_s8(v[2]), vreinterpretq_u32_s8(v[3]));
		int8_t *p = o + 64 * h; // dwords 0..3 of each block, then 4..7
		vst1q_u32((uint32_t *)(void *)(p + 0), vreinterpretq_u32_u64(vtrn1q_u64(vreinterpretq_u64_u32(t0), vreinterpretq_u64_u32(t2))));
		vst1q_u32((uint32_t *)(void *)(p + 16), vreinterpretq_u32_u64(vtrn1q_u64(vreinterpretq_u64_u32(t1), vreinterpretq_u64_u32(t3))));
		vst1q_u32((uint32_t *)(void *)(p + 32), vreinterpretq_u32_u64(vtrn2q_u64(vreinterpretq_u64_u32(t0), vreinterpretq_u64_u32(t2))));
		vst1q_u32((uint32_t *)(void *)(p + 48), vreinterpretq_u32_u64(vtrn2q_u64(vreinterpretq_u64_u32(t1), vreinterpretq_u64_u32(t3))));
	}
}

LGN void ln_unpack_w(const int T, const uint8_t *row, int64_t b0, int nb, int8_t *q, float *d, float *m) {
	const int bs = lg_type_bytes(T);
	for (int g = 0; g < (nb + LN_G - 1) / LN_G; g++) {
		int8x16_t a[4], b[4];
		for (int l = 0; l < LN_G; l++) {
			const int blk = g * LN_G + l;
			if (blk < nb) {
				const uint8_t *p = row + (b0 + blk) * bs;
				ln_wquants(T, p, &a[l], &b[l]);
				d[blk] = ln_h2f(p);
				m[blk] = ln_is1(T) ? ln_h2f(p + 2) : 0;
			} else {
				a[l] = b[l] = vdupq_n_s8(0);
				d[blk] = m[blk] = 0;
			}
		}
		ln_store_group(q + g * LN_G * LG_QK, a, b);
	}
}

static void ln_pack_x(int is1, const uint8_t *row, int64_t b0, int nb, int8_t *q, float *d, float *s) {
	const int bs = is1 ? 36 : 34, qo = is1 ? 4 : 2;
	for (int g = 0; g < (nb + LN_G - 1) / LN_G; g++) {
		int8x16_t a[4], b[4];
		for (int l = 0; l < LN_G; l++) {
			const int blk = g * LN_G + l;
			if (blk < nb) {
				const uint8_t *p = row + (b0 + blk) * bs;
				a[l] = vld1q_s8((const int8_t *)(p + qo));
				b[l] = vld1q_s8((const int8_t *)(p + qo + 16));
				d[blk] = ln_h2f(p);
				s[blk] = is1 ? ln_h2f(p + 2) : 0;
			} else {
				a[l] = b[l] = vdupq_n_s8(0);
				d[blk] = s[blk] = 0;
			}
		}
		ln_store_group(q + g * LN_G * LG_QK, a, b);
	}
}

LGN void ln_micro(const int T, const int NX, const int NR, const ln_wtile *wt, int wr, const ln_xtile *xt, int ng,
                  float out[LN_TX][LN_TR]) {
	const int is1 = ln_is1(T);
	float32x4_t fa[LN_TX][LN_TR];
	for (int i = 0; i < NX; i++)
		for (int r = 0; r < NR; r++) fa[i][r] = vdupq_n_f32(0);
	for (int g = 0; g < ng; g++) {
		int32x4_t ia[LN_TX][LN_TR];
		for (int i = 0; i < NX; i++)
			for (int r = 0; r < NR; r++) ia[i][r] = vdupq_n_s32(0);
		for (int e = 0; e < 8; e++) {
			int8x16_t wv[LN_TR];
			for (int r = 0; r < NR; r++) wv[r] = vld1q_s8(wt->q[wr + r] + g * 128 + e * 16);
			for (int i = 0; i < NX; i++) {
				const int8x16_t xv = vld1q_s8(xt->q[i] + g * 128 + e * 16);
				for (int r = 0; r < NR; r++) ia[i][r] = ln_dot(ia[i][r], wv[r], xv);
			}
		}
		for (int r = 0; r < NR; r++) {
			const float32x4_t dw = vld1q_f32(wt->d[wr + r] + g * LN_G);
			for (int i = 0; i < NX; i++) {
				fa[i][r] = vfmaq_f32(fa[i][r], vcvtq_f32_s32(ia[i][r]), vmulq_f32(dw, vld1q_f32(xt->d[i] + g * LN_G)));
				if (is1) fa[i][r] = vfmaq_f32(fa[i][r], vld1q_f32(wt->m[wr + r] + g * LN_G), vld1q_f32(xt->s[i] + g * LN_G));
			}
		}
	}
	for (int i = 0; i < NX; i++)
		for (int r = 0; r < NR; r++) out[i][r] = vaddvq_f32(fa[i][r]);
}

#define LN_MICRO_FN(T, SUF)                                                                          \
	static void ln_micro_##SUF(int nxx, int nr, const ln_wtile *wt, int wr, const ln_xtile *xt, int ng, \
	                           float out[LN_TX][LN_TR]) {                                            \
		switch (nr * 8 + nxx) {                                                                       \
		case 8 + 1: ln_micro(T, 1, 1, wt, wr, xt, ng, out); break;                                    \
		case 8 + 2: ln_micro(T, 2, 1, wt, wr, xt, ng, out); break;                                    \
		case 8 + 3: ln_micro(T, 3, 1, wt, wr, xt, ng, out); break;                                    \
		case 8 + 4: ln_micro(T, 4, 1, wt, wr, xt, ng, out); break;                                    \
		case 16 + 1: ln_micro(T, 1, 2, wt, wr, xt, ng, out); break;                                   \
		case 16 + 2: ln_micro(T, 2, 2, wt, wr, xt, ng, out); break;                                   \
		case 16 + 3: ln_micro(T, 3, 2, wt, wr, xt, ng, out); break;                                   \
		default: ln_micro(T, 4, 2, wt, wr, xt, ng, out); break;                                       \
		}                                                                                             \
	}

#define LN_UNPACK_FN(T, SUF)                                                                         \
	static void ln_unpack_##SUF(const uint8_t *row, int64_t b0, int nb, int8_t *q, float *d, float *m) { \
		ln_unpack_w(T, row, b0, nb, q, d, m);                                                         \
	}

// Q4_0, Q5_0 and Q8_0 share the signed micro-kernel (s); Q4_1 and Q5_1 the one with m*s (u).
LN_MICRO_FN(EMBER_Q8_0, s)
LN_MICRO_FN(EMBER_Q4_1, u)
LN_UNPACK_FN(EMBER_Q4_0, q4_0)
LN_UNPACK_FN(EMBER_Q4_1, q4_1)
LN_UNPACK_FN(EMBER_Q5_0, q5_0)
LN_UNPACK_FN(EMBER_Q5_1, q5_1)
LN_UNPACK_FN(EMBER_Q8_0, q8_0)

static void ln_tiled_q(int T, const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb, int64_t nx, int64_t k,
                       int64_t r0, int64_t r1, float *dst, int64_t ldd) {
	const int is1 = ln_is1(T);
	void (*micro)(int, int, const ln_wtile *, int, const ln_xtile *, int, float[LN_TX][LN_TR]) = is1 ? ln_micro_u : ln_micro_s;
	void (*unpack)(const uint8_t *, int64_t, int, int8_t *, float *, float *);
	switch (T) {
	case EMBER_Q4_0: unpack = ln_unpack_q4_0; break;
	case EMBER_Q4_1: unpack = ln_unpack_q4_1; break;
	case EMBER_Q5_0: unpack = ln_unpack_q5_0; break;
	case EMBER_Q5_1: unpack = ln_unpack_q5_1; break;
	default: unpack = ln_unpack_q8_0; break;
	}
	const int64_t nbk = k / LG_QK;
	ln_wtile wt __attribute__((aligned(64)));
	ln_xtile xt __attribute__((aligned(64)));
	for (int64_t rb = r0; rb < r1; rb += LN_RB) {
		const int nrb = (int)(r1 - rb < LN_RB ? r1 - rb : LN_RB);
		for (int64_t kb = 0; kb < nbk; kb += LN_KCB) {
			const int nb = (int)(nbk - kb < LN_KCB ? nbk - kb : LN_KCB), ng = (nb + LN_G - 1) / LN_G;
			for (int r = 0; r < nrb; r++) unpack(w + (rb + r) * wrb, kb, nb, wt.q[r], wt.d[r], wt.m[r]);
			for (int64_t i0 = 0; i0 < nx; i0 += LN_TX) {
				const int nxx = (int)(nx - i0 < LN_TX ? nx - i0 : LN_TX);
				for (int i = 0; i < nxx; i++) ln_pack_x(is1, x + (i0 + i) * xrb, kb, nb, xt.q[i], xt.d[i], xt.s[i]);
				for (int r = 0; r < nrb; r += LN_TR) {
					const int nr = nrb - r < LN_TR ? nrb - r : LN_TR;
					float out[LN_TX][LN_TR];
					micro(nxx, nr, &wt, r, &xt, ng, out);
					for (int i = 0; i < nxx; i++)
						for (int rr = 0; rr < nr; rr++) {
							float *p = dst + (i0 + i) * ldd + rb + r + rr;
							*p = kb == 0 ? out[i][rr] : *p + out[i][rr];
						}
				}
			}
		}
	}
}

int lg_gemm_neon(int wtype, const uint8_t *w, int64_t wrb, const uint8_t *xq, int64_t xrb, int64_t nx, int64_t k,
                 int64_t r0, int64_t r1, float *dst, int64_t ldd) {
	if (nx > LN_DIRECT_NX) {
		switch (wtype) {
		case EMBER_Q4_0: case EMBER_Q4_1: case EMBER_Q5_0: case EMBER_Q5_1: case EMBER_Q8_0:
			ln_tiled_q(wtype, w, wrb, xq, xrb, nx, k, r0, r1, dst, ldd);
			return 0;
		}
	}
	switch (wtype) {
	case EMBER_Q4_0: ln_direct_q4_0(w, wrb, xq, xrb, nx, k, r0, r1, dst, ldd); return 0;
	case EMBER_Q4_1: ln_direct_q4_1(w, wrb, xq, xrb, nx, k, r0, r1, dst, ldd); return 0;
	case EMBER_Q5_0: ln_direct_q5_0(w, wrb, xq, xrb, nx, k, r0, r1, dst, ldd); return 0;
	case EMBER_Q5_1: ln_direct_q5_1(w, wrb, xq, xrb, nx, k, r0, r1, dst, ldd); return 0;
	case EMBER_Q8_0: ln_direct_q8_0(w, wrb, xq, xrb, nx, k, r0, r1, dst, ldd); return 0;
	case EMBER_F16: ln_direct_f16(w, wrb, xq, xrb, nx, k, r0, r1, dst, ldd); return 0;
	case EMBER_BF16: ln_direct_bf16(w, wrb, xq, xrb, nx, k, r0, r1, dst, ldd); return 0;
	case EMBER_F32: ln_direct_f32(w, wrb, xq, xrb, nx, k, r0, r1, dst, ldd); return 0;
	}
	return -1;
}

#endif
