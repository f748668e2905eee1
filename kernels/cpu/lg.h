// lg.h: internals shared by the legacy-quant and float kernels (lg*.c) and the row ops
// (elem*.c). Not part of the contract (kernels.h); nothing here is visible to Go.
//
// Block layouts (little-endian, no padding), as package quant documents them:
//   Q4_0 18 B: d f16 | qs[16]            Q4_1 20 B: d f16 | m f16 | qs[16]
//   Q5_0 22 B: d f16 | qh u32 | qs[16]   Q5_1 24 B: d f16 | m f16 | qh u32 | qs[16]
//   Q8_0 34 B: d f16 | qs i8[32]         Q8_1 36 B: d f16 | s f16 | qs i8[32]
// qs byte j holds element j (low nibble) and j+16 (high nibble); qh bit j is the fifth
// bit of element j.
#ifndef EMBER_LG_H
#define EMBER_LG_H

#include <stdint.h>
#include <string.h>
#include "kernels.h"

#define LG_QK 32

// LG_OPAQUE(v) hides v from the optimizer so that a product is rounded before it is
// added (no FMA contraction), which the bit-exact dequantizers need on every compiler.
#if defined(__x86_64__) || defined(__i386__)
#define LG_OPAQUE(v) __asm__("" : "+x"(v))
#elif defined(__aarch64__)
#define LG_OPAQUE(v) __asm__("" : "+w"(v))
#else
#define LG_OPAQUE(v) do { volatile __typeof__(v) lg_opq_ = (v); (v) = lg_opq_; } while (0)
#endif

#define LG_INLINE static inline __attribute__((always_inline))

// The SIMD code uses unaligned loads and stores throughout, also on its 64-byte aligned
// stack tiles: they cost nothing on aligned data, and some toolchains (MinGW GCC) do not
// honor the alignment of stack variables.

// LG_UNROLL before a loop with a constant trip count unrolls it fully, so that register
// arrays indexed by its counter stay in registers.
#if defined(__clang__)
#define LG_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define LG_UNROLL _Pragma("GCC unroll 16")
#else
#define LG_UNROLL
#endif

LG_INLINE uint16_t lg_rd16(const void *p) { uint16_t v; memcpy(&v, p, 2); return v; }
LG_INLINE uint32_t lg_rd32(const void *p) { uint32_t v; memcpy(&v, p, 4); return v; }
LG_INLINE void lg_wr16(void *p, uint16_t v) { memcpy(p, &v, 2); }
LG_INLINE float lg_bits2f(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
LG_INLINE uint32_t lg_f2bits(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }

// lg_h2f widens a half exactly as quant.FP16ToFP32 (NaN: quiet bit set, payload kept).
LG_INLINE float lg_h2f(uint16_t h) {
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
	if (exp == 0x1f) return lg_bits2f(sign | 0x7f800000u | man << 13 | (man ? 0x00400000u : 0));
	if (exp == 0) return lg_bits2f(sign | lg_f2bits((float)man * (1.0f / 16777216.0f)));
	return lg_bits2f(sign | (exp + 112) << 23 | man << 13);
}

// lg_f2h rounds to the nearest half, ties to even, exactly as quant.FP32ToFP16 (NaN
// becomes sign|0x7e00).
LG_INLINE uint16_t lg_f2h(float f) {
	uint32_t b = lg_f2bits(f);
	uint16_t sign = (uint16_t)(b >> 16) & 0x8000;
	int exp = (int)(b >> 23) & 0xff;
	uint32_t man = b & 0x7fffff;
	if (exp == 0xff) return sign | (man ? 0x7e00 : 0x7c00);
	int e = exp - 127;
	if (e > 15) return sign | 0x7c00;
	if (e >= -14) {
		uint32_t h = (uint32_t)(e + 15) << 10 | man >> 13, rest = man & 0x1fff;
		if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++;
		return sign | (uint16_t)h;
	}
	if (e < -25) return sign;
	uint32_t m = man | 0x800000, shift = (uint32_t)(-(e + 1));
	uint32_t h = m >> shift, rest = m & ((1u << shift) - 1), half = 1u << (shift - 1);
	if (rest > half || (rest == half && (h & 1))) h++;
	return sign | (uint16_t)h;
}

LG_INLINE float lg_bf2f(uint16_t h) { return lg_bits2f((uint32_t)h << 16); }

// lg_f2bf is quant.FP32ToBF16: round to nearest even, NaN kept and forced quiet.
LG_INLINE uint16_t lg_f2bf(float f) {
	uint32_t u = lg_f2bits(f);
	if ((u & 0x7fffffff) > 0x7f800000) return (uint16_t)(u >> 16) | 0x40;
	return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

// lg_roundf is C's roundf (ties away from zero) for the Q8 quantizers, without libm.
LG_INLINE float lg_roundf(float v) { return __builtin_roundf(v); }

// lg_quant_q8_block quantizes 32 floats to one Q8_0 (q81 == 0) or Q8_1 block exactly as
// quant does. The SIMD quantizers use it for blocks whose 1/d overflows (|x| < ~4e-37).
LG_INLINE void lg_quant_q8_block(const float *xb, uint8_t *b, int q81) {
	const int qo = q81 ? 4 : 2;
	float amax = 0;
	for (int j = 0; j < LG_QK; j++) {
		float a = __builtin_fabsf(xb[j]);
		if (!(amax > a)) amax = a;
	}
	const float d = amax / 127.0f, id = d != 0 ? 1.0f / d : 0.0f;
	lg_wr16(b, lg_f2h(d));
	int32_t sum = 0;
	for (int j = 0; j < LG_QK; j++) {
		int8_t q = (int8_t)(int32_t)lg_roundf(xb[j] * id);
		b[qo + j] = (uint8_t)q;
		sum += q;
	}
	if (q81) lg_wr16(b + 2, lg_f2h((float)sum * d));
}

// Bytes per block (or element for the float types) and elements per block.
LG_INLINE int lg_type_bytes(int t) {
	switch (t) {
	case EMBER_F32: return 4;
	case EMBER_F16: case EMBER_BF16: return 2;
	case EMBER_Q4_0: return 18;
	case EMBER_Q4_1: return 20;
	case EMBER_Q5_0: return 22;
	case EMBER_Q5_1: return 24;
	case EMBER_Q8_0: return 34;
	case EMBER_Q8_1: return 36;
	}
	return 0;
}

// ---- per-ISA entry points (defined only where the ISA compiles) ----
// Each returns 0 when it handled the call and -1 when the type is not one of its own
// (the dispatcher in lg.c has already validated the type).

int lg_quantize_avx2(int vdt, const float *x, void *y, int64_t nrows, int64_t n);
int lg_dequantize_avx2(int t, const void *x, float *y, int64_t n);
int lg_gemm_avx2(int wtype, const uint8_t *w, int64_t wrb, const uint8_t *xq, int64_t xrb,
                 int64_t nx, int64_t k, int64_t r0, int64_t r1, float *dst, int64_t ldd);
// lg_avxvnni.c: lg_gemm_avx2 with the quantized types' batches on AVX-VNNI.
int lg_gemm_avxvnni(int wtype, const uint8_t *w, int64_t wrb, const uint8_t *xq, int64_t xrb,
                    int64_t nx, int64_t k, int64_t r0, int64_t r1, float *dst, int64_t ldd);
// lg_avx2_tile.c: the tiled gemm for the quantized and float weight types.
void lg_tiled_q_avx2(int T, const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb, int64_t nx, int64_t k,
                     int64_t r0, int64_t r1, float *dst, int64_t ldd);
void lg_tiled_f_avx2(int T, const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb, int64_t nx, int64_t k,
                     int64_t r0, int64_t r1, float *dst, int64_t ldd);
// The decode products of lg_avx512_quad.c (nb blocks per row; vnni for Q8_0 must be 1).
#define LG_QUAD_DECL(SUF)                                                                               \
	void l5_quad_##SUF(int vnni, const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb, int64_t nx, \
	                   int64_t nb, int64_t r0, int64_t r1, float *dst, int64_t ldd);
LG_QUAD_DECL(q4_0)
LG_QUAD_DECL(q4_1)
LG_QUAD_DECL(q5_0)
LG_QUAD_DECL(q5_1)
LG_QUAD_DECL(q8_0)
#undef LG_QUAD_DECL
// lg_avx512_dec.c: Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0 (wtype) against a few activation rows
// with VNNI; -1 (nothing done) for another type, a number of blocks not a multiple of 4
// (of 2 for Q8_0), or more than LG_DEC_XB blocks in four activation rows (k > 32768 for
// one, k > 8192 for four).
#define LG_DEC_XB 1024
int l5_dec_q(int wtype, const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb, int64_t nx, int64_t nb,
             int64_t r0, int64_t r1, float *dst, int64_t ldd);
int lg_gemm_avx512(int vnni, int wtype, const uint8_t *w, int64_t wrb, const uint8_t *xq,
                   int64_t xrb, int64_t nx, int64_t k, int64_t r0, int64_t r1, float *dst,
                   int64_t ldd);

// lg_avx512bf16.c: BF16 weights against BF16 activations with AVX512_BF16.
int lg_gemm_bf16_avx512(const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb, int64_t nx, int64_t k, int64_t r0,
                        int64_t r1, float *dst, int64_t ldd);

int lg_quantize_neon(int vdt, const float *x, void *y, int64_t nrows, int64_t n);
int lg_dequantize_neon(int t, const void *x, float *y, int64_t n);
int lg_gemm_neon(int wtype, const uint8_t *w, int64_t wrb, const uint8_t *xq, int64_t xrb,
                 int64_t nx, int64_t k, int64_t r0, int64_t r1, float *dst, int64_t ldd);

// The scalar path (lg.c), also the fallback of the SIMD files for what they leave out.
float lg_dot_scalar(int wtype, const uint8_t *w, const uint8_t *x, int64_t k);
int lg_quant_scalar(int vdt, const float *x, uint8_t *y, int64_t nrows, int64_t n);
int lg_dequant_scalar(int t, const uint8_t *x, float *y, int64_t n);

#endif
