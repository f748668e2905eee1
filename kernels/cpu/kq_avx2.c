// kq_avx2.c: the K-quant kernels on AVX2 + FMA + F16C (x86-64 only; every function carries
// its target attribute, so the file builds with the package's default flags).
//
// Layout of the work (kq_avx512.c has the same shape with 64-byte registers):
//   - kq_dec_*: decode one weight super-block in registers to the common form of kq.h:
//     eight 32-byte vectors of unsigned quants (elements 32v..32v+31), the sixteen
//     scales and offsets as int16, d and dmn.
//   - gemv (nx == 1): one weight row at a time, decoded in registers half a block at a
//     time, with software prefetch; per super-block vpmaddubsw (q * x, int16) then
//     vpmaddwd with the scales (int32), one int32 accumulator, then one float step
//     (d*dx*I - dmn*dx*M, with M from the bsums).
//   - gemm (nx > 1): a few rows (up to KQ_GEMVN_MAX) as gemv, four rows a pass; more
//     (kq_rows8.h) with the blocks of eight weight rows decoded once for a K chunk and
//     interleaved so that a vector lane is a weight row, against 128 activation rows. (Until
//     session 78 2x4 register tiles as in kq_avx512_body.h; the rows give their bits.)
#include "kq.h"

#if defined(__x86_64__)
#include "kq_x86.h"

// ---- gemv: one activation row, two weight rows in flight ----

// The int32 lanes of I (kq.h) of block b against the Q8_K quants xs, decoding the block
// half by half as it goes (its scales, offsets and floats land in o; o->q is unused).
KQ_AVX2_INLINE __m256i kq_block_i32(int t, const uint8_t *b, const uint8_t *xs, kq_dec256 *o) {
	kq_dec_meta(t, b, o);
	__m256i acc = _mm256_setzero_si256();
	for (int h = 0; h < 2; h++) {
		__m256i q[4];
		kq_dec_half(t, b, h, q);
		for (int s = 0; s < 4; s++) {
			__m256i x = _mm256_loadu_si256((const __m256i *)(xs + 128 * h + 32 * s));
			__m256i p = _mm256_maddubs_epi16(q[s], x);
			acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p, kq_scv(o->sc, 4 * h + s)));
			KQ_REG(acc); // a chain, not a tree of the eight products: no spills
		}
	}
	return acc;
}

// One weight row against one activation row, one float step per block. Q3_K and Q6_K
// reduce I - M exactly to one int32 first: their lanes hold the large partial sums of the
// +4/+32 offsets, which cancel only in the total. The types with mins keep float lanes
// (their lane sums are bounded by the terms' magnitudes, as in the reference).
//
// One row at a time, with software prefetch: two rows in flight (two interleaved
// streams) measured 30-50% slower on weights streamed from DRAM (Zen 5), and no faster
// from cache; the block's eight independent products give the ILP.
KQ_AVX2_INLINE void kq_gemv_row(int t, const uint8_t *w, const uint8_t *x, int64_t nb, float *dst,
                                const uint8_t *wend) {
	const int64_t bb = kq_wbytes(t);
	__m256 acc = _mm256_setzero_ps();
	__m128 acc1 = _mm_setzero_ps();
	for (int64_t b = 0; b < nb; b++, x += KQ_Q8K_BYTES, w += bb) {
		kq_prefetch_w(w, bb, wend);
		const float dx = kq_rdf32(x);
		const __m256i bs = _mm256_loadu_si256((const __m256i *)(x + KQ_Q8K_BSUMS));
		kq_dec256 o;
		const __m256i i = kq_block_i32(t, w, x + KQ_Q8K_QS, &o), m = _mm256_madd_epi16(bs, o.mn);
		if (KQ_HAS_MINS(t)) {
			acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i), _mm256_set1_ps(o.d * dx), acc);
			acc = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(m), _mm256_set1_ps(o.dmn * dx), acc);
		} else {
			const __m128i s = kq_hsum2_i32(_mm256_sub_epi32(i, m), _mm256_setzero_si256());
			acc1 = _mm_fmadd_ss(_mm_cvtepi32_ps(s), _mm_set_ss(o.d * dx), acc1);
		}
	}
	dst[0] = KQ_HAS_MINS(t) ? kq_hsum8(acc) : _mm_cvtss_f32(acc1);
}

#define KQ_GEMV_FN(name, T)                                                                        \
	static KQ_AVX2 void name(const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t nb, int64_t r0, \
	                         int64_t r1, float *dst) {                                              \
		for (int64_t r = r0; r < r1; r++) kq_gemv_row(T, w + r * wrb, x, nb, dst + r, w + r1 * wrb); \
	}
KQ_GEMV_FN(kq_gemv_q2k, EMBER_Q2_K)
KQ_GEMV_FN(kq_gemv_q3k, EMBER_Q3_K)
KQ_GEMV_FN(kq_gemv_q4k, EMBER_Q4_K)
KQ_GEMV_FN(kq_gemv_q5k, EMBER_Q5_K)
KQ_GEMV_FN(kq_gemv_q6k, EMBER_Q6_K)

// By kq_type_index.
static void (*const kq_gemvs[5])(const uint8_t *, int64_t, const uint8_t *, int64_t, int64_t, int64_t, float *) = {
	kq_gemv_q2k, kq_gemv_q3k, kq_gemv_q4k, kq_gemv_q5k, kq_gemv_q6k,
};

// ---- small batches: NX (<= 4) activation rows against one weight row at a time ----

// kq_gemv_row for NX activation rows (x + j*xrb), each half block decoded once into
// registers for all of them (batched decode: the tiles' unpacking costs more than the
// products for a few rows). Every row's float steps, and so its result, are its gemv's.
KQ_AVX2_INLINE void kq_gemvn_row(int t, int NX, const uint8_t *w, const uint8_t *x, int64_t xrb, int64_t nb,
                                 float *dst, int64_t ldd, const uint8_t *wend) {
	const int64_t bb = kq_wbytes(t);
	__m256 acc[4];
	for (int j = 0; j < 4; j++) acc[j] = _mm256_setzero_ps();
	__m128 acc4 = _mm_setzero_ps(); // Q3_K, Q6_K: lane j is row j's sum
	for (int64_t b = 0; b < nb; b++, w += bb) {
		kq_prefetch_w(w, bb, wend);
		kq_dec256 o;
		kq_dec_meta(t, w, &o);
		__m256i ii[4];
		for (int j = 0; j < 4; j++) ii[j] = _mm256_setzero_si256();
		for (int h = 0; h < 2; h++) {
			__m256i q[4];
			kq_dec_half(t, w, h, q);
			for (int u = 0; u < 4; u++) {
				const __m256i sc = kq_scv(o.sc, 4 * h + u);
				for (int j = 0; j < NX; j++) {
					const __m256i xv = _mm256_loadu_si256(
						(const __m256i *)(x + j * xrb + b * KQ_Q8K_BYTES + KQ_Q8K_QS + 128 * h + 32 * u));
					ii[j] = _mm256_add_epi32(ii[j], _mm256_madd_epi16(_mm256_maddubs_epi16(q[u], xv), sc));
				}
			}
		}
		float dxs[4] = {0, 0, 0, 0};
		__m256i v[4];
		for (int j = 0; j < 4; j++) v[j] = _mm256_setzero_si256();
		for (int j = 0; j < NX; j++) {
			const uint8_t *xb = x + j * xrb + b * KQ_Q8K_BYTES;
			dxs[j] = kq_rdf32(xb);
			const __m256i m = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(xb + KQ_Q8K_BSUMS)), o.mn);
			if (KQ_HAS_MINS(t)) {
				acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(ii[j]), _mm256_set1_ps(o.d * dxs[j]), acc[j]);
				acc[j] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(m), _mm256_set1_ps(o.dmn * dxs[j]), acc[j]);
			} else {
				v[j] = _mm256_sub_epi32(ii[j], m);
			}
		}
		if (!KQ_HAS_MINS(t)) { // the rows' I - M summed exactly, together
			const __m256i s8 = _mm256_hadd_epi32(_mm256_hadd_epi32(v[0], v[1]), _mm256_hadd_epi32(v[2], v[3]));
			const __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s8), _mm256_extracti128_si256(s8, 1));
			acc4 = _mm_fmadd_ps(_mm_cvtepi32_ps(s4), _mm_mul_ps(_mm_set1_ps(o.d), _mm_loadu_ps(dxs)), acc4);
		}
	}
	float out4[4];
	_mm_storeu_ps(out4, acc4);
	for (int j = 0; j < NX; j++) dst[j * ldd] = KQ_HAS_MINS(t) ? kq_hsum8(acc[j]) : out4[j];
}

#define KQ_GEMVN_FN(T, tn, NX)                                                                     \
	static KQ_AVX2 void kq_gemvn_##tn##_##NX(const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb, \
	                                         int64_t nb, int64_t r0, int64_t r1, float *dst, int64_t ldd) { \
		for (int64_t r = r0; r < r1; r++)                                                      \
			kq_gemvn_row(T, NX, w + r * wrb, x, xrb, nb, dst + r, ldd, w + r1 * wrb);        \
	}
#define KQ_GEMVN_TYPE(T, tn) KQ_GEMVN_FN(T, tn, 2) KQ_GEMVN_FN(T, tn, 3) KQ_GEMVN_FN(T, tn, 4)
KQ_GEMVN_TYPE(EMBER_Q2_K, q2k)
KQ_GEMVN_TYPE(EMBER_Q3_K, q3k)
KQ_GEMVN_TYPE(EMBER_Q4_K, q4k)
KQ_GEMVN_TYPE(EMBER_Q5_K, q5k)
KQ_GEMVN_TYPE(EMBER_Q6_K, q6k)
#undef KQ_GEMVN_TYPE
#undef KQ_GEMVN_FN

#define KQ_GN3(tn) {kq_gemvn_##tn##_2, kq_gemvn_##tn##_3, kq_gemvn_##tn##_4}
// [kq_type_index][NX - 2]
static void (*const kq_gemvns[5][3])(const uint8_t *, int64_t, const uint8_t *, int64_t, int64_t, int64_t, int64_t,
                                     float *, int64_t) = {
	KQ_GN3(q2k), KQ_GN3(q3k), KQ_GN3(q4k), KQ_GN3(q5k), KQ_GN3(q6k),
};
#undef KQ_GN3

// Batches of up to this many activation rows take kq_gemvn instead of the tiles
// (BenchmarkGemmKQSmallBatch, 4096 x 4096, against the tiles: Q4_K at 2, 4 and 8 rows
// 2.1x, 1.7x and 1.2x; Q6_K 2.5x, 1.85x and 1.1x).
#define KQ_GEMVN_MAX 8

// ---- gemm: eight weight rows a vector (kq_rows8.h) ----

#include "kq_rows8.h"

KQ_AVX2 void ember_kq_gemm_avx2(int t, const uint8_t *w, int64_t wrb, const uint8_t *xq, int64_t xrb,
                                int64_t nx, int64_t nb, int64_t r0, int64_t r1, float *dst, int64_t ldd) {
	const int ti = kq_type_index(t);
	if (nx == 1) {
		kq_gemvs[ti](w, wrb, xq, nb, r0, r1, dst);
		return;
	}
	if (nx > KQ_GEMVN_MAX) {
		kq_gemm8(t, w, wrb, xq, xrb, nx, nb, r0, r1, dst, ldd);
		return;
	}
	// A few rows: up to 4 a pass, over runs of 32 weight rows that stay in the cache.
	for (int64_t a = r0; a < r1; a += 32) {
		const int64_t z = r1 - a > 32 ? a + 32 : r1;
		for (int64_t j = 0; j < nx; j += 4) {
			const int nj = nx - j >= 4 ? 4 : (int)(nx - j);
			if (nj == 1)
				kq_gemvs[ti](w, wrb, xq + j * xrb, nb, a, z, dst + j * ldd);
			else
				kq_gemvns[ti][nj - 2](w, wrb, xq + j * xrb, xrb, nb, a, z, dst + j * ldd, ldd);
		}
	}
}

// ---- dequantize ----

KQ_AVX2 void ember_kq_dequant_avx2(int t, const uint8_t *x, float *y, int64_t nblocks) {
	if (t == EMBER_Q8_K) {
		for (int64_t ib = 0; ib < nblocks; ib++, x += KQ_Q8K_BYTES, y += KQ_QK) {
			const __m256 d = _mm256_set1_ps(kq_rdf32(x));
			for (int j = 0; j < KQ_QK; j += 8) {
				__m256i q = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(x + KQ_Q8K_QS + j)));
				_mm256_storeu_ps(y + j, _mm256_mul_ps(d, _mm256_cvtepi32_ps(q)));
			}
		}
		return;
	}
	const int64_t bb = kq_wbytes(t);
	const int off = t == EMBER_Q3_K ? 4 : t == EMBER_Q6_K ? 32 : 0;
	const __m256i voff = _mm256_set1_epi32(off);
	for (int64_t ib = 0; ib < nblocks; ib++, x += bb, y += KQ_QK) {
		kq_dec256 o;
		kq_dec(t, x, &o);
		int16_t sc[16], mn[16];
		_mm256_storeu_si256((__m256i *)sc, o.sc);
		_mm256_storeu_si256((__m256i *)mn, o.mn);
		for (int s = 0; s < 16; s++) {
			// y = (d*sc) * (q - off) - dmin*m, as quant.Dequantize rounds it
			const __m256 dl = _mm256_set1_ps(o.d * (float)sc[s]);
			const __m256 ml = _mm256_set1_ps(off ? 0.0f : o.dmn * (float)mn[s]);
			__m128i q16 = s % 2 ? _mm256_extracti128_si256(o.q[s / 2], 1) : _mm256_castsi256_si128(o.q[s / 2]);
			for (int h = 0; h < 2; h++) {
				__m256i qi = _mm256_sub_epi32(_mm256_cvtepu8_epi32(h ? _mm_srli_si128(q16, 8) : q16), voff);
				__m256 p = _mm256_mul_ps(dl, _mm256_cvtepi32_ps(qi));
				_mm256_storeu_ps(y + 16 * s + 8 * h, off ? p : _mm256_sub_ps(p, ml));
			}
		}
	}
}

// ---- Q8_K quantizer (bit-exact with the scalar one) ----

KQ_AVX2 void ember_kq_quantize_q8k_avx2(const float *x, uint8_t *y, int64_t nblocks) {
	const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
	for (int64_t ib = 0; ib < nblocks; ib++, x += KQ_QK, y += KQ_Q8K_BYTES) {
		__m256 mx = _mm256_setzero_ps();
		for (int j = 0; j < KQ_QK; j += 8) // vmaxps returns its second operand on NaN: NaN is skipped
			mx = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(x + j), absmask), mx);
		__m128 m4 = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
		m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
		m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
		const float amax = _mm_cvtss_f32(m4);
		if (amax == 0) {
			memset(y, 0, KQ_Q8K_BYTES);
			continue;
		}
		// the signed value of the first element of largest magnitude
		const __m256 va = _mm256_set1_ps(amax);
		float maxv = 0;
		for (int j = 0; j < KQ_QK; j += 8) {
			int m = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_and_ps(_mm256_loadu_ps(x + j), absmask), va, _CMP_EQ_OQ));
			if (m) {
				maxv = x[j + __builtin_ctz(m)];
				break;
			}
		}
		const float iscale = -127.0f / maxv;
		const __m256 vis = _mm256_set1_ps(iscale), magic = _mm256_set1_ps(12582912.0f);
		const __m256i mant = _mm256_set1_epi32(0x007fffff), bias = _mm256_set1_epi32(0x00400000);
		const __m256i c127 = _mm256_set1_epi32(127), cff = _mm256_set1_epi32(0xff);
		const __m256i perm = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
		const __m256i ones8 = _mm256_set1_epi8(1), ones16 = _mm256_set1_epi16(1);
		__m256i quads[8];
		for (int v = 0; v < 8; v++) {
			__m256i q[4];
			for (int k = 0; k < 4; k++) {
				// nearest_int(iscale*x): product rounded, then the 1.5*2^23 trick, as the reference
				__m256 p = _mm256_mul_ps(_mm256_loadu_ps(x + 32 * v + 8 * k), vis);
				__m256i i = _mm256_sub_epi32(_mm256_and_si256(_mm256_castps_si256(_mm256_add_ps(p, magic)), mant), bias);
				q[k] = _mm256_and_si256(_mm256_min_epi32(i, c127), cff); // (int8) of min(127, v)
			}
			__m256i b = _mm256_packus_epi16(_mm256_packus_epi32(q[0], q[1]), _mm256_packus_epi32(q[2], q[3]));
			b = _mm256_permutevar8x32_epi32(b, perm);
			_mm256_storeu_si256((__m256i *)(y + KQ_Q8K_QS + 32 * v), b);
			quads[v] = _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, b), ones16); // sums of 4 bytes
		}
		// quads[v] lane l = sum of bytes 4l..4l+3 of vector v; bsum[2v + g] = lanes 4g..4g+3
		__m256i h0 = _mm256_hadd_epi32(_mm256_hadd_epi32(quads[0], quads[1]), _mm256_hadd_epi32(quads[2], quads[3]));
		__m256i h1 = _mm256_hadd_epi32(_mm256_hadd_epi32(quads[4], quads[5]), _mm256_hadd_epi32(quads[6], quads[7]));
		// h0 = [b0 b2 b4 b6 | b1 b3 b5 b7], h1 = [b8 b10 b12 b14 | b9 b11 b13 b15]
		__m256i p16 = _mm256_packs_epi32(h0, h1); // [b0 b2 b4 b6 b8 b10 b12 b14 | b1 b3 ... b15]
		__m128i e = _mm256_castsi256_si128(p16), o = _mm256_extracti128_si256(p16, 1);
		_mm_storeu_si128((__m128i *)(y + KQ_Q8K_BSUMS), _mm_unpacklo_epi16(e, o));
		_mm_storeu_si128((__m128i *)(y + KQ_Q8K_BSUMS + 16), _mm_unpackhi_epi16(e, o));
		const float d = 1.0f / iscale;
		memcpy(y, &d, 4);
	}
}

#endif
