// kq_x86.h: the AVX2 building blocks of the K-quant kernels, shared by kq_avx2.c and
// kq_avx512.c (an always_inline function for AVX2 inlines into an AVX-512 one). x86-64
// only; include after kq.h.
#ifndef EMBER_KQ_X86_H
#define EMBER_KQ_X86_H
#if defined(__x86_64__)
#include <immintrin.h>

#define KQ_AVX2 __attribute__((target("avx2,fma,f16c")))
#define KQ_AVX2_INLINE static inline __attribute__((always_inline, target("avx2,fma,f16c")))

// One decoded super-block (see kq.h): q[v] holds the unsigned quants of elements
// 32v..32v+31; sc and mn the 16 scales and offsets (one per 16 elements).
typedef struct {
	__m256i q[8];
	__m256i sc, mn;
	float d, dmn;
} kq_dec256;

// Keeps v in a register: stops the compiler from re-reading a value once per use as a
// memory operand (the gemm tile is otherwise bound by loads).
#define KQ_REG(v) __asm__("" : "+x"(v))

// Software prefetch of the block KQ_PF_DIST bytes ahead in a weight row (gemv streams
// weights from memory; the hardware prefetchers alone leave bandwidth unused). Only
// addresses below wend, the end of the rows being read, are touched. 8 KiB ahead, not
// 2 (session 70, the 2-core AVX-512 EPYC VM): one thread's Q4_K stream 27.8 -> 29.5 GB/s
// on AVX2 and 29.7 -> 38.0 on AVX-512 VNNI (BenchmarkGemvKQStream; 4 KiB between, 16 KiB
// worse in the step); two-thread tg128, 2 and 8 KiB builds alternating, ratios of
// DeepSeek-V2-Lite Q4_K_M 0.88-1.24 (5 of 6 faster, median ~1.10) and on AVX2 1.03-1.16
// (6 of 6), Llama-3.2-1B Q4_K_M 0.99-1.09 (7 of 8, ~1.03).
#ifndef KQ_PF_DIST
#define KQ_PF_DIST 8192
#endif
KQ_AVX2_INLINE void kq_prefetch_w(const uint8_t *b, int64_t bb, const uint8_t *wend) {
	const uint8_t *p = b + KQ_PF_DIST;
	for (int64_t o = 0; o < bb; o += 64)
		if (p + o < wend) _mm_prefetch((const char *)(p + o), _MM_HINT_T0);
}

// kq_prefetch_unpack: the weight bytes the gemm's next unpack reads, into L1 while the
// tiles of this one run (the unpacks otherwise wait on memory: with 16 activation rows
// they took a third of a batched decode step). This unpack read rows [r, r+nr) and
// blocks [k0, k0+kb) (nr rows a group, r1 the end); the next reads the same rows' next
// blocks, or the next group's first ones.
KQ_AVX2_INLINE void kq_prefetch_unpack(const uint8_t *w, int64_t wrb, int64_t bb, int64_t nb, int64_t r, int nr,
                                       int64_t r1, int64_t k0, int64_t kb) {
	int64_t rn = r, kn0 = k0 + kb;
	if (kn0 >= nb) rn = r + nr, kn0 = 0;
	if (rn >= r1) return;
	const int64_t bytes = (nb - kn0 < kb ? nb - kn0 : kb) * bb, rows = r1 - rn < nr ? r1 - rn : nr;
	for (int64_t i = 0; i < rows; i++) {
		const uint8_t *p = w + (rn + i) * wrb + kn0 * bb;
		const uint8_t *line = (const uint8_t *)((uintptr_t)p & ~(uintptr_t)63);
		for (; line < p + bytes; line += 64) _mm_prefetch((const char *)line, _MM_HINT_T0);
	}
}

KQ_AVX2_INLINE float kq_h2f_avx2(const uint8_t *p) { return _cvtsh_ss(kq_rd16(p)); }

// [a0 a0 a1 a1 ... a7 a7] as int16 from 8 unsigned bytes.
KQ_AVX2_INLINE __m256i kq_dup8_u8(uint64_t bytes) {
	__m128i s = _mm_cvtepu8_epi16(_mm_cvtsi64_si128((long long)bytes));
	return _mm256_set_m128i(_mm_unpackhi_epi16(s, s), _mm_unpacklo_epi16(s, s));
}

// (x >> k & 1) << p per byte, for compile-time k, p (0..7): an epi16 shift keeps the
// bit inside its byte when the mask is one bit.
#define KQ_BIT_AVX2(x, k, p)                                                                       \
	((k) >= (p) ? _mm256_and_si256(_mm256_srli_epi16(x, (k) - (p)), _mm256_set1_epi8(1 << (p)))     \
	            : _mm256_and_si256(_mm256_slli_epi16(x, (p) - (k)), _mm256_set1_epi8(1 << (p))))

// The quants of elements 128h..128h+127 of block b of type t: q[s] = elements
// 128h + 32s .. +31. h is a compile-time constant after inlining.
KQ_AVX2_INLINE void kq_dec_half(int t, const uint8_t *b, int h, __m256i q[4]) {
	const __m256i m3 = _mm256_set1_epi8(3), m4 = _mm256_set1_epi8(0x0f), m30 = _mm256_set1_epi8(0x30);
	switch (t) {
	case EMBER_Q2_K:
	case EMBER_Q3_K: {
		__m256i v = _mm256_loadu_si256((const __m256i *)(b + (t == EMBER_Q2_K ? 16 : 32) + 32 * h));
		q[0] = _mm256_and_si256(v, m3);
		q[1] = _mm256_and_si256(_mm256_srli_epi16(v, 2), m3);
		q[2] = _mm256_and_si256(_mm256_srli_epi16(v, 4), m3);
		q[3] = _mm256_and_si256(_mm256_srli_epi16(v, 6), m3);
		if (t == EMBER_Q3_K) { // + 4 where the hmask bit (4h + s) is set
			const __m256i hm = _mm256_loadu_si256((const __m256i *)b);
			if (h == 0) {
				q[0] = _mm256_or_si256(q[0], KQ_BIT_AVX2(hm, 0, 2));
				q[1] = _mm256_or_si256(q[1], KQ_BIT_AVX2(hm, 1, 2));
				q[2] = _mm256_or_si256(q[2], KQ_BIT_AVX2(hm, 2, 2));
				q[3] = _mm256_or_si256(q[3], KQ_BIT_AVX2(hm, 3, 2));
			} else {
				q[0] = _mm256_or_si256(q[0], KQ_BIT_AVX2(hm, 4, 2));
				q[1] = _mm256_or_si256(q[1], KQ_BIT_AVX2(hm, 5, 2));
				q[2] = _mm256_or_si256(q[2], KQ_BIT_AVX2(hm, 6, 2));
				q[3] = _mm256_or_si256(q[3], KQ_BIT_AVX2(hm, 7, 2));
			}
		}
		break;
	}
	case EMBER_Q4_K:
	case EMBER_Q5_K: {
		const uint8_t *qs = b + (t == EMBER_Q5_K ? 48 : 16) + 64 * h;
		__m256i v0 = _mm256_loadu_si256((const __m256i *)qs), v1 = _mm256_loadu_si256((const __m256i *)(qs + 32));
		q[0] = _mm256_and_si256(v0, m4);
		q[1] = _mm256_and_si256(_mm256_srli_epi16(v0, 4), m4);
		q[2] = _mm256_and_si256(v1, m4);
		q[3] = _mm256_and_si256(_mm256_srli_epi16(v1, 4), m4);
		if (t == EMBER_Q5_K) { // + 16 where the qh bit (4h + s) is set
			const __m256i qh = _mm256_loadu_si256((const __m256i *)(b + 16));
			if (h == 0) {
				q[0] = _mm256_or_si256(q[0], KQ_BIT_AVX2(qh, 0, 4));
				q[1] = _mm256_or_si256(q[1], KQ_BIT_AVX2(qh, 1, 4));
				q[2] = _mm256_or_si256(q[2], KQ_BIT_AVX2(qh, 2, 4));
				q[3] = _mm256_or_si256(q[3], KQ_BIT_AVX2(qh, 3, 4));
			} else {
				q[0] = _mm256_or_si256(q[0], KQ_BIT_AVX2(qh, 4, 4));
				q[1] = _mm256_or_si256(q[1], KQ_BIT_AVX2(qh, 5, 4));
				q[2] = _mm256_or_si256(q[2], KQ_BIT_AVX2(qh, 6, 4));
				q[3] = _mm256_or_si256(q[3], KQ_BIT_AVX2(qh, 7, 4));
			}
		}
		break;
	}
	default: { // Q6_K: low nibbles from ql, two high bits from qh
		__m256i l0 = _mm256_loadu_si256((const __m256i *)(b + 64 * h));
		__m256i l1 = _mm256_loadu_si256((const __m256i *)(b + 64 * h + 32));
		__m256i qh = _mm256_loadu_si256((const __m256i *)(b + 128 + 32 * h));
		q[0] = _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), m30));
		q[1] = _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), m30));
		q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), _mm256_and_si256(qh, m30));
		q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
		                       _mm256_and_si256(_mm256_srli_epi16(qh, 2), m30));
		break;
	}
	}
}

// The scales, offsets (kq.h) and the two floats of block b of type t.
KQ_AVX2_INLINE void kq_dec_meta(int t, const uint8_t *b, kq_dec256 *o) {
	switch (t) {
	case EMBER_Q2_K: {
		__m128i s = _mm_loadu_si128((const __m128i *)b), m4 = _mm_set1_epi8(0x0f);
		o->sc = _mm256_cvtepu8_epi16(_mm_and_si128(s, m4));
		o->mn = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(s, 4), m4));
		o->d = kq_h2f_avx2(b + 80);
		o->dmn = kq_h2f_avx2(b + 82);
		break;
	}
	case EMBER_Q3_K: {
		uint64_t s6[2];
		kq_q3_scales(b + 96, s6);
		__m128i s = _mm_set_epi64x((long long)s6[1], (long long)s6[0]);
		o->sc = _mm256_sub_epi16(_mm256_cvtepu8_epi16(s), _mm256_set1_epi16(32));
		o->mn = _mm256_slli_epi16(o->sc, 2);
		o->d = o->dmn = kq_h2f_avx2(b + 108);
		break;
	}
	case EMBER_Q4_K:
	case EMBER_Q5_K: {
		uint32_t sc[2], m[2];
		kq_k4_scales(b + 4, sc, m);
		o->sc = kq_dup8_u8((uint64_t)sc[0] | (uint64_t)sc[1] << 32);
		o->mn = kq_dup8_u8((uint64_t)m[0] | (uint64_t)m[1] << 32);
		o->d = kq_h2f_avx2(b);
		o->dmn = kq_h2f_avx2(b + 2);
		break;
	}
	default:
		o->sc = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b + 192)));
		o->mn = _mm256_slli_epi16(o->sc, 5);
		o->d = o->dmn = kq_h2f_avx2(b + 208);
		break;
	}
}

KQ_AVX2_INLINE void kq_dec(int t, const uint8_t *b, kq_dec256 *o) {
	kq_dec_meta(t, b, o);
	kq_dec_half(t, b, 0, o->q);
	kq_dec_half(t, b, 1, o->q + 4);
}

// The int16 scales of the 16 lanes of a vpmaddubsw result over elements 32v..32v+31:
// [sc[2v] x 8, sc[2v+1] x 8].
KQ_AVX2_INLINE __m256i kq_scv(__m256i sc, int v) {
	__m256i half = v < 4 ? _mm256_permute2x128_si256(sc, sc, 0x00) : _mm256_permute2x128_si256(sc, sc, 0x11);
	int a = 4 * (v % 4);
	__m256i ctl = _mm256_setr_epi8(a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1,
	                               a + 2, a + 3, a + 2, a + 3, a + 2, a + 3, a + 2, a + 3, a + 2, a + 3, a + 2, a + 3,
	                               a + 2, a + 3, a + 2, a + 3);
	return _mm256_shuffle_epi8(half, ctl);
}

KQ_AVX2_INLINE float kq_hsum8(__m256 v) {
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

// The K-quant weight types in table order: Q2_K, Q3_K, Q4_K, Q5_K, Q6_K -> 0..4.
static inline int kq_type_index(int t) {
	return t == EMBER_Q2_K ? 0 : t == EMBER_Q3_K ? 1 : t == EMBER_Q4_K ? 2 : t == EMBER_Q5_K ? 3 : 4;
}

// Q2_K, Q4_K, Q5_K have a dmin of their own; Q3_K and Q6_K subtract their offset
// (M, with dmn == d) from I exactly, in int32.
#define KQ_HAS_MINS(t) ((t) == EMBER_Q2_K || (t) == EMBER_Q4_K || (t) == EMBER_Q5_K)

// [sum a, sum b, (same), (same)] of the int32 lanes, exact.
KQ_AVX2_INLINE __m128i kq_hsum2_i32(__m256i a, __m256i b) {
	__m256i h = _mm256_hadd_epi32(a, b); // [a01 a23 b01 b23 | a45 a67 b45 b67]
	__m128i s = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
	return _mm_hadd_epi32(s, s);
}

#endif
#endif
