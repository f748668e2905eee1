// kq.h: shared definitions of the K-quant kernels (kq*.c). Not part of the contract
// (kernels.h); every symbol here is static or prefixed ember_kq_.
//
// Block layouts (little-endian, no padding; see inference/quant/kquants.go):
//   Q2_K  84 B: scales[16] | qs[64] | d f16 | dmin f16
//   Q3_K 110 B: hmask[32] | qs[64] | scales[12] | d f16
//   Q4_K 144 B: d f16 | dmin f16 | scales[12] | qs[128]
//   Q5_K 176 B: d f16 | dmin f16 | scales[12] | qh[32] | qs[128]
//   Q6_K 210 B: ql[128] | qh[64] | scales int8[16] | d f16
//   Q8_K 292 B: d f32 | qs int8[256] | bsums int16[16]
//
// The integer formulation every gemm path uses: a weight super-block decodes to unsigned
// quants q[256] (0..63), a scale sc[s] and an offset mn[s] per 16 elements, and two
// floats d, dmn, such that its dot with a Q8_K block (dx, x[256], bsums[16]) is
//   dx * (d * I - dmn * M),  I = sum_s sc[s] * sum_{i in s} q[i]*x[i],  M = sum_s mn[s]*bsums[s]
// Q2_K/Q4_K/Q5_K: mn = the 4/6-bit min, dmn = dmin. Q3_K: q = q3 + 4, mn = 4*sc, dmn = d.
// Q6_K: q = q6 + 32, mn = 32*sc, dmn = d. (M uses the activation's bsums, so they must be
// those of its quants, as the Q8_K quantizer writes them.)
#ifndef EMBER_KQ_H
#define EMBER_KQ_H

// The dequantizer and the quantizer must give the bits of the Go reference, which rounds
// every product: no fused multiply-add unless written as one (_mm*_fmadd_*, vfmaq_*).
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <stdint.h>
#include <string.h>

#include "kernels.h"

#define KQ_QK 256
#define KQ_Q8K_BYTES 292
#define KQ_Q8K_QS 4
#define KQ_Q8K_BSUMS 260

#if defined(__GNUC__)
#define KQ_INLINE static inline __attribute__((always_inline))
#define KQ_RESTRICT __restrict__
#define KQ_ALIGN(n) __attribute__((aligned(n)))
#else
#define KQ_INLINE static inline
#define KQ_RESTRICT
#define KQ_ALIGN(n)
#endif

// One decoded super-block (see above), as the AVX-512 tiles and NEON's take it (AVX2 and
// AVX-512 VNNI interleave sixteen or eight rows instead: kq_rows8.h, kq_vnni16.h).
// scv[i] = sc[i/8]: the scale of each int16 lane of a vpmaddubsw result over elements
// (2i, 2i+1), so a 64-byte register covering elements [64v, 64v+64) loads its scales from
// scv+32v.
typedef struct {
	uint8_t q[KQ_QK];
	int16_t scv[128];
	int16_t sc[16];
	int16_t mn[16];
	float d, dmn;
	int32_t pad[6];
} KQ_ALIGN(64) kq_block;

// Bytes of one weight super-block of type t, or 0 if t is not a K-quant weight type.
static inline int64_t kq_wbytes(int t) {
	switch (t) {
	case EMBER_Q2_K: return 84;
	case EMBER_Q3_K: return 110;
	case EMBER_Q4_K: return 144;
	case EMBER_Q5_K: return 176;
	case EMBER_Q6_K: return 210;
	}
	return 0;
}

static inline uint16_t kq_rd16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline int16_t kq_rdi16(const uint8_t *p) { return (int16_t)kq_rd16(p); }
static inline float kq_rdf32(const uint8_t *p) { float f; memcpy(&f, p, 4); return f; }

// IEEE half to float, exact (NaN: payload kept, quiet bit set), as quant.FP16ToFP32.
static inline float kq_h2f(uint16_t h) {
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
	float f;
	if (exp == 0x1f) {
		bits = sign | 0x7f800000u | man << 13;
		if (man) bits |= 0x00400000u;
	} else if (exp == 0) {
		f = (float)man * (1.0f / 16777216.0f);
		memcpy(&bits, &f, 4);
		bits |= sign;
	} else {
		bits = sign | (exp + 127 - 15) << 23 | man << 13;
	}
	memcpy(&f, &bits, 4);
	return f;
}

// The 6-bit scales (sc) and mins (m) of the 8 sub-blocks of a Q4_K/Q5_K block from its
// 12 scale bytes q, as four little-endian words each (bytes j = sub-block j).
static inline void kq_k4_scales(const uint8_t *q, uint32_t sc[2], uint32_t m[2]) {
	uint32_t w0, w1, w2;
	memcpy(&w0, q, 4);
	memcpy(&w1, q + 4, 4);
	memcpy(&w2, q + 8, 4);
	sc[0] = w0 & 0x3f3f3f3fu;
	m[0] = w1 & 0x3f3f3f3fu;
	sc[1] = (w2 & 0x0f0f0f0fu) | ((w0 >> 6) & 0x03030303u) << 4;
	m[1] = ((w2 >> 4) & 0x0f0f0f0fu) | ((w1 >> 6) & 0x03030303u) << 4;
}

// The sixteen 6-bit Q3_K scales, biased (0..63; subtract 32), as bytes (scale j is byte
// j%8 of out[j/8]), from the 12 scale bytes s: the low nibble of scale j is s[j%8]
// (j < 8: low nibble, else high), its top two bits are bits 2*(j/4) of s[8 + j%4].
static inline void kq_q3_scales(const uint8_t *s, uint64_t out[2]) {
	uint32_t a0, a1, a2;
	memcpy(&a0, s, 4);
	memcpy(&a1, s + 4, 4);
	memcpy(&a2, s + 8, 4);
	uint32_t r0 = (a0 & 0x0f0f0f0fu) | ((a2 << 4) & 0x30303030u);        // scales 0-3
	uint32_t r1 = (a1 & 0x0f0f0f0fu) | ((a2 << 2) & 0x30303030u);        // 4-7
	uint32_t r2 = ((a0 >> 4) & 0x0f0f0f0fu) | (a2 & 0x30303030u);        // 8-11
	uint32_t r3 = ((a1 >> 4) & 0x0f0f0f0fu) | ((a2 >> 2) & 0x30303030u); // 12-15
	out[0] = (uint64_t)r0 | (uint64_t)r1 << 32;
	out[1] = (uint64_t)r2 | (uint64_t)r3 << 32;
}

// ---- per-path entry points (kq_scalar.c, kq_avx2.c, kq_avx512.c, kq_neon.c) ----
// gemm: as ember_gemm_kq for one K-quant wtype, nb = k/256 super-blocks per row.

void ember_kq_quantize_q8k_scalar(const float *x, uint8_t *y, int64_t nblocks);
void ember_kq_unpack_scalar(int t, const uint8_t *w, kq_block *u);
void ember_kq_dequant_scalar(int t, const uint8_t *x, float *y, int64_t nblocks);
void ember_kq_gemm_scalar(int t, const uint8_t *w, int64_t wrb, const uint8_t *xq, int64_t xrb,
                          int64_t nx, int64_t nb, int64_t r0, int64_t r1, float *dst, int64_t ldd);

#if defined(__x86_64__)
void ember_kq_quantize_q8k_avx2(const float *x, uint8_t *y, int64_t nblocks);
void ember_kq_dequant_avx2(int t, const uint8_t *x, float *y, int64_t nblocks);
void ember_kq_gemm_avx2(int t, const uint8_t *w, int64_t wrb, const uint8_t *xq, int64_t xrb,
                        int64_t nx, int64_t nb, int64_t r0, int64_t r1, float *dst, int64_t ldd);
void ember_kq_gemm_avxvnni(int t, const uint8_t *w, int64_t wrb, const uint8_t *xq, int64_t xrb,
                           int64_t nx, int64_t nb, int64_t r0, int64_t r1, float *dst, int64_t ldd);
void ember_kq_quantize_q8k_avx512(const float *x, uint8_t *y, int64_t nblocks);
void ember_kq_dequant_avx512(int t, const uint8_t *x, float *y, int64_t nblocks);
void ember_kq_gemm_avx512(int t, const uint8_t *w, int64_t wrb, const uint8_t *xq, int64_t xrb,
                          int64_t nx, int64_t nb, int64_t r0, int64_t r1, float *dst, int64_t ldd);
void ember_kq_gemm_avx512vnni(int t, const uint8_t *w, int64_t wrb, const uint8_t *xq, int64_t xrb,
                              int64_t nx, int64_t nb, int64_t r0, int64_t r1, float *dst, int64_t ldd);
#endif

#if defined(__aarch64__)
void ember_kq_quantize_q8k_neon(const float *x, uint8_t *y, int64_t nblocks);
void ember_kq_dequant_neon(int t, const uint8_t *x, float *y, int64_t nblocks);
void ember_kq_gemm_neon(int t, const uint8_t *w, int64_t wrb, const uint8_t *xq, int64_t xrb,
                        int64_t nx, int64_t nb, int64_t r0, int64_t r1, float *dst, int64_t ldd);
#endif

#endif
