// kq_avx512.c: the K-quant kernels on AVX-512 F/BW/VL (x86-64 only; target attributes, so
// the file builds with default flags). The same shape as kq_avx2.c with 64-byte vectors:
//   - kq_dec512_half: half a super-block (128 elements) to two vectors of unsigned quants
//     in element order, with variable shifts, vpternlogd and byte masks for the high bits;
//   - gemv: one weight row at a time with prefetch, one float step per block;
//   - gemm: blocks decoded once into kq_block, 4x4 register tiles (16 int32 accumulators,
//     one per weight row x activation row, reduced per block to the 16 lanes of one
//     vector).
// kq_avx512_body.h holds the gemv and gemm; it is compiled twice, with vpmaddwd + vpaddd
// (EMBER_ISA_AVX512) and with VNNI's vpdpwssd (EMBER_ISA_AVX512VNNI). With VNNI, batches
// of more than KQ_GEMVN_MAX rows take kq_vnni16.h instead (a weight row a vector lane,
// the tiles' bits).
#include "kq.h"

#if defined(__x86_64__)
#include "kq_x86.h"

#define KQ_512_TARGET "avx512f,avx512bw,avx512vl,avx2,fma,f16c"
#define KQ_512 __attribute__((target(KQ_512_TARGET)))
#define KQ_512_INLINE static inline __attribute__((always_inline, target(KQ_512_TARGET)))
#define KQ_REG512(v) __asm__("" : "+v"(v))

// Per epi16 lane shift counts: c0 for the low 256 bits, c1 for the high 256 bits.
KQ_512_INLINE __m512i kq_cnt2(int c0, int c1) {
	return _mm512_inserti64x4(_mm512_set1_epi16((short)c0), _mm256_set1_epi16((short)c1), 1);
}

// Bytes 1 << k0 (low 256 bits) and 1 << k1 (high 256 bits).
KQ_512_INLINE __m512i kq_bits2(int k0, int k1) {
	return _mm512_inserti64x4(_mm512_set1_epi8((char)(1 << k0)), _mm256_set1_epi8((char)(1 << k1)), 1);
}

KQ_512_INLINE __m512i kq_bcast256(const uint8_t *p) {
	return _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)p));
}

// The quants of elements 128h..128h+127 of block b of type t: q[i] = elements
// 128h + 64i .. +63 (the order of kq_dec_half's four 32-byte vectors, paired).
KQ_512_INLINE void kq_dec512_half(int t, const uint8_t *b, int h, __m512i q[2]) {
	const __m512i m3 = _mm512_set1_epi8(3), m4 = _mm512_set1_epi8(0x0f), m30 = _mm512_set1_epi8(0x30);
	switch (t) {
	case EMBER_Q2_K:
	case EMBER_Q3_K: {
		__m512i v = kq_bcast256(b + (t == EMBER_Q2_K ? 16 : 32) + 32 * h);
		q[0] = _mm512_and_si512(_mm512_srlv_epi16(v, kq_cnt2(0, 2)), m3);
		q[1] = _mm512_and_si512(_mm512_srlv_epi16(v, kq_cnt2(4, 6)), m3);
		if (t == EMBER_Q3_K) { // + 4 where the hmask bit (4h + s) is set
			__m512i hm = kq_bcast256(b);
			const __m512i four = _mm512_set1_epi8(4);
			__mmask64 k0 = _mm512_test_epi8_mask(hm, kq_bits2(4 * h, 4 * h + 1));
			__mmask64 k1 = _mm512_test_epi8_mask(hm, kq_bits2(4 * h + 2, 4 * h + 3));
			q[0] = _mm512_mask_add_epi8(q[0], k0, q[0], four);
			q[1] = _mm512_mask_add_epi8(q[1], k1, q[1], four);
		}
		break;
	}
	case EMBER_Q4_K:
	case EMBER_Q5_K: {
		const uint8_t *qs = b + (t == EMBER_Q5_K ? 48 : 16) + 64 * h;
		q[0] = _mm512_and_si512(_mm512_srlv_epi16(kq_bcast256(qs), kq_cnt2(0, 4)), m4);
		q[1] = _mm512_and_si512(_mm512_srlv_epi16(kq_bcast256(qs + 32), kq_cnt2(0, 4)), m4);
		if (t == EMBER_Q5_K) { // + 16 where the qh bit (4h + s) is set
			__m512i qh = kq_bcast256(b + 16);
			const __m512i sixteen = _mm512_set1_epi8(16);
			__mmask64 k0 = _mm512_test_epi8_mask(qh, kq_bits2(4 * h, 4 * h + 1));
			__mmask64 k1 = _mm512_test_epi8_mask(qh, kq_bits2(4 * h + 2, 4 * h + 3));
			q[0] = _mm512_mask_add_epi8(q[0], k0, q[0], sixteen);
			q[1] = _mm512_mask_add_epi8(q[1], k1, q[1], sixteen);
		}
		break;
	}
	default: { // Q6_K: ql[64h..64h+63] holds the low nibbles of all four 32-groups
		__m512i l = _mm512_loadu_si512((const void *)(b + 64 * h));
		__m512i qh = kq_bcast256(b + 128 + 32 * h);
		__m512i h0 = _mm512_and_si512(_mm512_sllv_epi16(qh, kq_cnt2(4, 2)), m30);
		__m512i h1 = _mm512_and_si512(_mm512_srlv_epi16(qh, kq_cnt2(0, 2)), m30);
		q[0] = _mm512_ternarylogic_epi32(l, m4, h0, 0xea); // (l & m4) | h0
		q[1] = _mm512_ternarylogic_epi32(_mm512_srli_epi16(l, 4), m4, h1, 0xea);
		break;
	}
	}
}

// The int16 scales of the 32 lanes of a vpmaddubsw result over elements 64v..64v+63:
// sc[4v + lane/8] (sc: the sixteen int16 scales).
KQ_512_INLINE __m512i kq_scv512(__m256i sc, int v) {
	const __m512i idx = _mm512_add_epi16(
		_mm512_set_epi16(3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0),
		_mm512_set1_epi16((short)(4 * v)));
	return _mm512_permutexvar_epi16(idx, _mm512_castsi256_si512(sc));
}

// R[i] = sum of the 16 lanes of a[i], i = 0..15, exact: the AVX2 tree on 512-bit lanes
// (pairs, quads within 128-bit lanes: blends and in-lane shuffles), then two levels across
// 128-bit lanes.
KQ_512_INLINE __m512i kq_pair_sum512(__m512i a, __m512i b) {
	__m512i u = _mm512_mask_blend_epi32(0xaaaa, a, b), w = _mm512_mask_blend_epi32(0xaaaa, b, a);
	return _mm512_add_epi32(u, _mm512_shuffle_epi32(w, (_MM_PERM_ENUM)0xb1));
}
KQ_512_INLINE __m512i kq_quad_sum512(__m512i a, __m512i b) {
	__m512i u = _mm512_mask_blend_epi32(0xcccc, a, b), w = _mm512_mask_blend_epi32(0xcccc, b, a);
	return _mm512_add_epi32(u, _mm512_shuffle_epi32(w, (_MM_PERM_ENUM)0x4e));
}
KQ_512_INLINE __m512i kq_lane_sum512(__m512i a, __m512i b) { // [a0+a1, a2+a3, b0+b1, b2+b3] (128-bit lanes)
	return _mm512_add_epi32(_mm512_shuffle_i32x4(a, b, 0x88), _mm512_shuffle_i32x4(a, b, 0xdd));
}
KQ_512_INLINE __m512i kq_reduce16(const __m512i a[16]) {
	__m512i q[4];
	for (int k = 0; k < 4; k++)
		q[k] = kq_quad_sum512(kq_pair_sum512(a[4 * k], a[4 * k + 1]), kq_pair_sum512(a[4 * k + 2], a[4 * k + 3]));
	// q[k], 128-bit lane l: partial sums of a[4k..4k+3] over lane l
	return kq_lane_sum512(kq_lane_sum512(q[0], q[1]), kq_lane_sum512(q[2], q[3]));
}

KQ_512_INLINE float kq_hsum16(__m512 v) {
	__m256 s = _mm256_add_ps(_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
	return kq_hsum8(s);
}

// Batches of up to this many activation rows take kq_gemvn instead of the tiles. Measured
// (BenchmarkGemmKQSmallBatch, 4096 x 4096): Q4_K at 2, 4 and 8 rows 2.9x, 2.3x and 1.8x
// the tiles' speed, Q6_K about even; through the engine on Llama-3.2-1B Q4_K_M (2 threads)
// 4 and 8 streams decode 67 -> 107 and 73 -> 95 tok/s summed. Past 8 the tiles catch up.
#define KQ_GEMVN_MAX_MINS 8
#define KQ_GEMVN_MAX 8

#define KQ_VNNI 0
#define KQ_N(name) name##_512
#define KQ_BODY_TARGET KQ_512_TARGET
#include "kq_avx512_body.h"
#undef KQ_VNNI
#undef KQ_N
#undef KQ_BODY_TARGET

#define KQ_VNNI 1
#define KQ_N(name) name##_vnni
#define KQ_BODY_TARGET KQ_512_TARGET ",avx512vnni"
#include "kq_avx512_body.h"
#undef KQ_VNNI
#undef KQ_N
#undef KQ_BODY_TARGET

void ember_kq_gemm_avx512(int t, const uint8_t *w, int64_t wrb, const uint8_t *xq, int64_t xrb,
                          int64_t nx, int64_t nb, int64_t r0, int64_t r1, float *dst, int64_t ldd) {
	kq_gemm_512(t, w, wrb, xq, xrb, nx, nb, r0, r1, dst, ldd);
}

#include "kq_vnni16.h"

void ember_kq_gemm_avx512vnni(int t, const uint8_t *w, int64_t wrb, const uint8_t *xq, int64_t xrb,
                              int64_t nx, int64_t nb, int64_t r0, int64_t r1, float *dst, int64_t ldd) {
	if (nb > 0 && nx > (KQ_HAS_MINS(t) ? KQ_GEMVN_MAX_MINS : KQ_GEMVN_MAX))
		kq_gemm16(t, w, wrb, xq, xrb, nx, nb, r0, r1, dst, ldd);
	else
		kq_gemm_vnni(t, w, wrb, xq, xrb, nx, nb, r0, r1, dst, ldd);
}

// ---- dequantize ----

KQ_512 void ember_kq_dequant_avx512(int t, const uint8_t *x, float *y, int64_t nblocks) {
	if (t == EMBER_Q8_K) {
		for (int64_t ib = 0; ib < nblocks; ib++, x += KQ_Q8K_BYTES, y += KQ_QK) {
			const __m512 d = _mm512_set1_ps(kq_rdf32(x));
			for (int j = 0; j < KQ_QK; j += 16) {
				__m512i q = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(x + KQ_Q8K_QS + j)));
				_mm512_storeu_ps(y + j, _mm512_mul_ps(d, _mm512_cvtepi32_ps(q)));
			}
		}
		return;
	}
	const int64_t bb = kq_wbytes(t);
	const int off = t == EMBER_Q3_K ? 4 : t == EMBER_Q6_K ? 32 : 0;
	const __m512i voff = _mm512_set1_epi32(off);
	for (int64_t ib = 0; ib < nblocks; ib++, x += bb, y += KQ_QK) {
		kq_dec256 o;
		kq_dec_meta(t, x, &o);
		int16_t sc[16], mn[16];
		_mm256_storeu_si256((__m256i *)sc, o.sc);
		_mm256_storeu_si256((__m256i *)mn, o.mn);
		uint8_t q[KQ_QK];
		for (int h = 0; h < 2; h++) {
			__m512i v[2];
			kq_dec512_half(t, x, h, v);
			_mm512_storeu_si512((void *)(q + 128 * h), v[0]);
			_mm512_storeu_si512((void *)(q + 128 * h + 64), v[1]);
		}
		for (int s = 0; s < 16; s++) {
			// y = (d*sc) * (q - off) - dmin*m, as quant.Dequantize rounds it
			const __m512 dl = _mm512_set1_ps(o.d * (float)sc[s]);
			const __m512 ml = _mm512_set1_ps(off ? 0.0f : o.dmn * (float)mn[s]);
			__m512i qi = _mm512_sub_epi32(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(q + 16 * s))), voff);
			__m512 p = _mm512_mul_ps(dl, _mm512_cvtepi32_ps(qi));
			_mm512_storeu_ps(y + 16 * s, off ? p : _mm512_sub_ps(p, ml));
		}
	}
}

// ---- Q8_K quantizer (bit-exact with the scalar one) ----

KQ_512 void ember_kq_quantize_q8k_avx512(const float *x, uint8_t *y, int64_t nblocks) {
	for (int64_t ib = 0; ib < nblocks; ib++, x += KQ_QK, y += KQ_Q8K_BYTES) {
		__m512 mx = _mm512_setzero_ps();
		for (int j = 0; j < KQ_QK; j += 16) // vmaxps returns its second operand on NaN: NaN is skipped
			mx = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(x + j)), mx);
		__m256 m8 = _mm256_max_ps(_mm512_castps512_ps256(mx), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(mx), 1)));
		__m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m8), _mm256_extractf128_ps(m8, 1));
		m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
		m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
		const float amax = _mm_cvtss_f32(m4);
		if (amax == 0) {
			memset(y, 0, KQ_Q8K_BYTES);
			continue;
		}
		// the signed value of the first element of largest magnitude
		const __m512 va = _mm512_set1_ps(amax);
		float maxv = 0;
		for (int j = 0; j < KQ_QK; j += 16) {
			__mmask16 m = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_loadu_ps(x + j)), va, _CMP_EQ_OQ);
			if (m) {
				maxv = x[j + __builtin_ctz(m)];
				break;
			}
		}
		const float iscale = -127.0f / maxv;
		const __m512 vis = _mm512_set1_ps(iscale), magic = _mm512_set1_ps(12582912.0f);
		const __m512i mant = _mm512_set1_epi32(0x007fffff), bias = _mm512_set1_epi32(0x00400000);
		const __m512i c127 = _mm512_set1_epi32(127);
		__m512i grp[16];
		for (int g = 0; g < 16; g++) {
			// nearest_int(iscale*x): product rounded, then the 1.5*2^23 trick, as the reference
			__m512 p = _mm512_mul_ps(_mm512_loadu_ps(x + 16 * g), vis);
			__m512i i = _mm512_sub_epi32(_mm512_and_si512(_mm512_castps_si512(_mm512_add_ps(p, magic)), mant), bias);
			i = _mm512_min_epi32(i, c127);
			_mm_storeu_si128((__m128i *)(y + KQ_Q8K_QS + 16 * g), _mm512_cvtepi32_epi8(i)); // truncates: (int8)
			// the bsum of the group: of the stored bytes, sign-extended back
			grp[g] = _mm512_srai_epi32(_mm512_slli_epi32(i, 24), 24);
		}
		_mm256_storeu_si256((__m256i *)(y + KQ_Q8K_BSUMS), _mm512_cvtepi32_epi16(kq_reduce16(grp)));
		const float d = 1.0f / iscale;
		memcpy(y, &d, 4);
	}
}

#endif
