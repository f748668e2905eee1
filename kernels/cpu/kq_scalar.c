// kq_scalar.c: the portable K-quant kernels, the fallback of every path and the model the
// SIMD paths follow (see kq.h for the integer formulation).
#include "kq.h"

// ---- Q8_K quantizer: quantize_row_q8_K_ref, bit for bit with quant.Quantize ----

static inline int32_t kq_nearest_int(float f) {
	float v = f + 12582912.0f;
	int32_t i;
	memcpy(&i, &v, 4);
	return (i & 0x007fffff) - 0x00400000;
}

void ember_kq_quantize_q8k_scalar(const float *x, uint8_t *y, int64_t nblocks) {
	for (int64_t ib = 0; ib < nblocks; ib++, x += KQ_QK, y += KQ_Q8K_BYTES) {
		float amax = 0, maxv = 0;
		for (int j = 0; j < KQ_QK; j++) {
			float a;
			uint32_t b;
			memcpy(&b, &x[j], 4);
			b &= 0x7fffffffu; // fabsf, also for NaN
			memcpy(&a, &b, 4);
			if (amax < a) {
				amax = a;
				maxv = x[j];
			}
		}
		if (amax == 0) {
			memset(y, 0, KQ_Q8K_BYTES);
			continue;
		}
		const float iscale = -127.0f / maxv;
		int8_t *q = (int8_t *)(y + KQ_Q8K_QS);
		for (int j = 0; j < KQ_QK; j++) {
			int32_t v = kq_nearest_int(iscale * x[j]); // no FMA: see kq.h
			q[j] = (int8_t)(uint8_t)(v < 127 ? v : 127);
		}
		for (int j = 0; j < 16; j++) {
			int32_t s = 0;
			for (int l = 0; l < 16; l++) s += q[16 * j + l];
			uint16_t u = (uint16_t)(int16_t)s;
			y[KQ_Q8K_BSUMS + 2 * j] = (uint8_t)u;
			y[KQ_Q8K_BSUMS + 2 * j + 1] = (uint8_t)(u >> 8);
		}
		const float d = 1.0f / iscale;
		memcpy(y, &d, 4);
	}
}

// ---- unpacking one weight super-block to the common form ----

// Element 128h + 32s + l of Q2_K/Q3_K: bits 2s of qs[32h + l]; of Q6_K: the nibble
// (s/2) of ql[64h + 32(s%2) + l] and bits 2s of qh[32h + l]; of Q4_K/Q5_K, element
// 64c + 32hi + l: nibble hi of qs[32c + l] (and bit 2c + hi of qh[l]). The loops run
// over l innermost, so the compiler can vectorize them.

static void kq_unpack_q2k(const uint8_t *b, kq_block *u) {
	const uint8_t *sc = b, *qs = b + 16;
	for (int h = 0; h < 2; h++)
		for (int s = 0; s < 4; s++)
			for (int l = 0; l < 32; l++) u->q[128 * h + 32 * s + l] = (qs[32 * h + l] >> (2 * s)) & 3;
	for (int j = 0; j < 16; j++) {
		u->sc[j] = sc[j] & 0x0f;
		u->mn[j] = sc[j] >> 4;
	}
	u->d = kq_h2f(kq_rd16(b + 80));
	u->dmn = kq_h2f(kq_rd16(b + 82));
}

static void kq_unpack_q3k(const uint8_t *b, kq_block *u) {
	const uint8_t *hm = b, *qs = b + 32;
	uint64_t s6[2];
	kq_q3_scales(b + 96, s6);
	for (int h = 0; h < 2; h++)
		for (int s = 0; s < 4; s++)
			for (int l = 0; l < 32; l++)
				u->q[128 * h + 32 * s + l] =
					(uint8_t)(((qs[32 * h + l] >> (2 * s)) & 3) | (((hm[l] >> (4 * h + s)) & 1) << 2));
	for (int j = 0; j < 16; j++) {
		u->sc[j] = (int16_t)((s6[j / 8] >> (8 * (j % 8))) & 0xff) - 32;
		u->mn[j] = (int16_t)(4 * u->sc[j]);
	}
	u->d = u->dmn = kq_h2f(kq_rd16(b + 108));
}

static void kq_unpack_q45k(const uint8_t *b, kq_block *u, int five) {
	const uint8_t *qh = b + 16, *qs = b + (five ? 48 : 16);
	uint32_t sc[2], m[2];
	kq_k4_scales(b + 4, sc, m);
	for (int c = 0; c < 4; c++)
		for (int l = 0; l < 32; l++) {
			u->q[64 * c + l] = qs[32 * c + l] & 0x0f;
			u->q[64 * c + 32 + l] = qs[32 * c + l] >> 4;
		}
	if (five)
		for (int c = 0; c < 4; c++)
			for (int l = 0; l < 32; l++) {
				u->q[64 * c + l] |= ((qh[l] >> (2 * c)) & 1) << 4;
				u->q[64 * c + 32 + l] |= ((qh[l] >> (2 * c + 1)) & 1) << 4;
			}
	for (int j = 0; j < 16; j++) {
		int s = j / 2;
		u->sc[j] = (sc[s / 4] >> (8 * (s % 4))) & 0xff;
		u->mn[j] = (m[s / 4] >> (8 * (s % 4))) & 0xff;
	}
	u->d = kq_h2f(kq_rd16(b));
	u->dmn = kq_h2f(kq_rd16(b + 2));
}

static void kq_unpack_q6k(const uint8_t *b, kq_block *u) {
	const uint8_t *ql = b, *qh = b + 128;
	const int8_t *sc = (const int8_t *)(b + 192);
	for (int h = 0; h < 2; h++)
		for (int l = 0; l < 32; l++) {
			const uint8_t l0 = ql[64 * h + l], l1 = ql[64 * h + 32 + l], hb = qh[32 * h + l];
			uint8_t *q = u->q + 128 * h + l;
			q[0] = (uint8_t)((l0 & 0x0f) | ((hb & 3) << 4));
			q[32] = (uint8_t)((l1 & 0x0f) | (((hb >> 2) & 3) << 4));
			q[64] = (uint8_t)((l0 >> 4) | (((hb >> 4) & 3) << 4));
			q[96] = (uint8_t)((l1 >> 4) | ((hb >> 6) << 4));
		}
	for (int j = 0; j < 16; j++) {
		u->sc[j] = sc[j];
		u->mn[j] = (int16_t)(32 * sc[j]);
	}
	u->d = u->dmn = kq_h2f(kq_rd16(b + 208));
}

// Decodes block w of type t into u (q, sc, mn, d, dmn; not scv, which only the SIMD
// gemm paths use and fill themselves).
void ember_kq_unpack_scalar(int t, const uint8_t *w, kq_block *u) {
	switch (t) {
	case EMBER_Q2_K: kq_unpack_q2k(w, u); break;
	case EMBER_Q3_K: kq_unpack_q3k(w, u); break;
	case EMBER_Q4_K: kq_unpack_q45k(w, u, 0); break;
	case EMBER_Q5_K: kq_unpack_q45k(w, u, 1); break;
	case EMBER_Q6_K: kq_unpack_q6k(w, u); break;
	}
}

// ---- dequantize: the values of quant.Dequantize, operation for operation ----

// Element i of a decoded block is dl[i/16] * (q[i] - off) - ml[i/16], with
// dl = d*sc and ml = dmin*min (Q2_K, Q4_K, Q5_K) or 0 (Q3_K: off 4, Q6_K: off 32).
static void kq_dequant_block(int t, const kq_block *u, float *y) {
	int off = t == EMBER_Q3_K ? 4 : t == EMBER_Q6_K ? 32 : 0;
	int mins = off == 0;
	for (int s = 0; s < 16; s++) {
		float dl = u->d * (float)u->sc[s];
		float ml = mins ? u->dmn * (float)u->mn[s] : 0.0f;
		for (int l = 0; l < 16; l++) {
			float p = dl * (float)((int)u->q[16 * s + l] - off);
			y[16 * s + l] = mins ? p - ml : p;
		}
	}
}

void ember_kq_dequant_scalar(int t, const uint8_t *x, float *y, int64_t nblocks) {
	if (t == EMBER_Q8_K) {
		for (int64_t ib = 0; ib < nblocks; ib++, x += KQ_Q8K_BYTES, y += KQ_QK) {
			float d = kq_rdf32(x);
			for (int j = 0; j < KQ_QK; j++) y[j] = d * (float)(int8_t)x[KQ_Q8K_QS + j];
		}
		return;
	}
	int64_t bb = kq_wbytes(t);
	kq_block u;
	for (int64_t ib = 0; ib < nblocks; ib++, x += bb, y += KQ_QK) {
		ember_kq_unpack_scalar(t, x, &u);
		kq_dequant_block(t, &u, y);
	}
}

// ---- gemm ----

// The dot of a decoded weight block with one Q8_K block.
static inline float kq_dot_block(const kq_block *u, const uint8_t *xb) {
	const int8_t *x = (const int8_t *)(xb + KQ_Q8K_QS);
	int32_t isum = 0, msum = 0;
	for (int s = 0; s < 16; s++) {
		int32_t t = 0;
		for (int l = 0; l < 16; l++) t += (int32_t)u->q[16 * s + l] * x[16 * s + l];
		isum += t * u->sc[s];
		msum += (int32_t)u->mn[s] * kq_rdi16(xb + KQ_Q8K_BSUMS + 2 * s);
	}
	float dx = kq_rdf32(xb);
	return dx * (u->d * (float)isum - u->dmn * (float)msum);
}

void ember_kq_gemm_scalar(int t, const uint8_t *w, int64_t wrb, const uint8_t *xq, int64_t xrb,
                          int64_t nx, int64_t nb, int64_t r0, int64_t r1, float *dst, int64_t ldd) {
	const int64_t bb = kq_wbytes(t);
	kq_block u;
	for (int64_t r = r0; r < r1; r++) {
		const uint8_t *wr = w + r * wrb;
		for (int64_t i = 0; i < nx; i++) dst[i * ldd + r] = 0;
		for (int64_t b = 0; b < nb; b++) {
			ember_kq_unpack_scalar(t, wr + b * bb, &u);
			for (int64_t i = 0; i < nx; i++)
				dst[i * ldd + r] += kq_dot_block(&u, xq + i * xrb + b * KQ_Q8K_BYTES);
		}
	}
}
