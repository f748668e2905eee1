// kq_avx512_body.h: the AVX-512 gemv and gemm of the K-quants, included twice by
// kq_avx512.c: KQ_VNNI 0 (vpmaddwd + vpaddd) and 1 (vpdpwssd), names suffixed by KQ_N,
// compiled for KQ_BODY_TARGET. Same structure as the AVX2 code in kq_avx2.c.

#define KQ_B __attribute__((target(KQ_BODY_TARGET)))
#define KQ_B_INLINE static inline __attribute__((always_inline, target(KQ_BODY_TARGET)))

// acc + madd(p, s): the int16 products of a vpmaddubsw result p and scales s, pairwise
// summed to int32 and accumulated.
#if KQ_VNNI
#define KQ_MADD_ACC(acc, p, s) _mm512_dpwssd_epi32(acc, p, s)
#else
#define KQ_MADD_ACC(acc, p, s) _mm512_add_epi32(acc, _mm512_madd_epi16(p, s))
#endif

// ---- gemv: one activation row, two weight rows in flight ----

// The int32 lanes of I (kq.h) of block b against the Q8_K quants xs; o gets the scales,
// offsets and floats.
KQ_B_INLINE __m512i KQ_N(kq_block_i32)(int t, const uint8_t *b, const uint8_t *xs, kq_dec256 *o) {
	kq_dec_meta(t, b, o);
	__m512i acc = _mm512_setzero_si512();
	for (int h = 0; h < 2; h++) {
		__m512i q[2];
		kq_dec512_half(t, b, h, q);
		for (int i = 0; i < 2; i++) {
			__m512i x = _mm512_loadu_si512((const void *)(xs + 128 * h + 64 * i));
			acc = KQ_MADD_ACC(acc, _mm512_maddubs_epi16(q[i], x), kq_scv512(o->sc, 2 * h + i));
			KQ_REG512(acc);
		}
	}
	return acc;
}

// One weight row at a time, as kq_gemv_row in kq_avx2.c (exact int32 I - M for Q3_K and
// Q6_K, float lanes for the types with mins, software prefetch).
KQ_B_INLINE void KQ_N(kq_gemv_row)(int t, const uint8_t *w, const uint8_t *x, int64_t nb, float *dst,
                                   const uint8_t *wend) {
	const int64_t bb = kq_wbytes(t);
	__m512 acc = _mm512_setzero_ps();
	__m128 acc1 = _mm_setzero_ps();
	for (int64_t b = 0; b < nb; b++, x += KQ_Q8K_BYTES, w += bb) {
		kq_prefetch_w(w, bb, wend);
		const float dx = kq_rdf32(x);
		const __m256i bs = _mm256_loadu_si256((const __m256i *)(x + KQ_Q8K_BSUMS));
		kq_dec256 o;
		const __m512i i = KQ_N(kq_block_i32)(t, w, x + KQ_Q8K_QS, &o);
		const __m512i m = _mm512_zextsi256_si512(_mm256_madd_epi16(bs, o.mn));
		if (KQ_HAS_MINS(t)) {
			acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i), _mm512_set1_ps(o.d * dx), acc);
			acc = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(m), _mm512_set1_ps(o.dmn * dx), acc);
		} else {
			const __m512i v = _mm512_sub_epi32(i, m);
			const __m256i v8 = _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
			const __m128i s = kq_hsum2_i32(v8, _mm256_setzero_si256());
			acc1 = _mm_fmadd_ss(_mm_cvtepi32_ps(s), _mm_set_ss(o.d * dx), acc1);
		}
	}
	dst[0] = KQ_HAS_MINS(t) ? kq_hsum16(acc) : _mm_cvtss_f32(acc1);
}

#define KQ_GEMV512_FN(T, tn)                                                                       \
	static KQ_B void KQ_N(kq_gemv_##tn)(const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t nb,  \
	                                    int64_t r0, int64_t r1, float *dst) {                      \
		for (int64_t r = r0; r < r1; r++) KQ_N(kq_gemv_row)(T, w + r * wrb, x, nb, dst + r, w + r1 * wrb); \
	}
KQ_GEMV512_FN(EMBER_Q2_K, q2k)
KQ_GEMV512_FN(EMBER_Q3_K, q3k)
KQ_GEMV512_FN(EMBER_Q4_K, q4k)
KQ_GEMV512_FN(EMBER_Q5_K, q5k)
KQ_GEMV512_FN(EMBER_Q6_K, q6k)
#undef KQ_GEMV512_FN

// By kq_type_index.
static void (*const KQ_N(kq_gemvs)[5])(const uint8_t *, int64_t, const uint8_t *, int64_t, int64_t, int64_t,
                                       float *) = {
	KQ_N(kq_gemv_q2k), KQ_N(kq_gemv_q3k), KQ_N(kq_gemv_q4k), KQ_N(kq_gemv_q5k), KQ_N(kq_gemv_q6k),
};

// ---- small batches: NX (<= 4) activation rows against one weight row at a time ----

// As kq_gemv_row for NX activation rows (x + j*xrb), each block decoded once into
// registers: batched decode's few rows skip the tile path's unpacking, which costs more
// than a whole gemv. The float steps per row are kq_gemv_row's, so every row's result
// equals its gemv (Q3_K and Q6_K reduce the rows' exact block sums together).
KQ_B_INLINE void KQ_N(kq_gemvn_row)(int t, int NX, const uint8_t *w, const uint8_t *x, int64_t xrb, int64_t nb,
                                    float *dst, int64_t ldd, const uint8_t *wend) {
	const int64_t bb = kq_wbytes(t);
	__m512 acc[4];
	for (int j = 0; j < 4; j++) acc[j] = _mm512_setzero_ps();
	__m128 acc4 = _mm_setzero_ps(); // Q3_K, Q6_K: lane j is row j's sum
	for (int64_t b = 0; b < nb; b++, w += bb) {
		kq_prefetch_w(w, bb, wend);
		kq_dec256 o;
		kq_dec_meta(t, w, &o);
		__m512i q[4], sv[4], v[4];
		kq_dec512_half(t, w, 0, q);
		kq_dec512_half(t, w, 1, q + 2);
		for (int u = 0; u < 4; u++) sv[u] = kq_scv512(o.sc, u);
		float dxs[4] = {0, 0, 0, 0};
		for (int j = 0; j < 4; j++) v[j] = _mm512_setzero_si512();
		for (int j = 0; j < NX; j++) {
			const uint8_t *xb = x + j * xrb + b * KQ_Q8K_BYTES;
			__m512i i = _mm512_setzero_si512();
			for (int u = 0; u < 4; u++) {
				__m512i xv = _mm512_loadu_si512((const void *)(xb + KQ_Q8K_QS + 64 * u));
				i = KQ_MADD_ACC(i, _mm512_maddubs_epi16(q[u], xv), sv[u]);
				KQ_REG512(i);
			}
			dxs[j] = kq_rdf32(xb);
			const __m256i bs = _mm256_loadu_si256((const __m256i *)(xb + KQ_Q8K_BSUMS));
			const __m512i m = _mm512_zextsi256_si512(_mm256_madd_epi16(bs, o.mn));
			if (KQ_HAS_MINS(t)) {
				acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i), _mm512_set1_ps(o.d * dxs[j]), acc[j]);
				acc[j] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(m), _mm512_set1_ps(o.dmn * dxs[j]), acc[j]);
			} else {
				v[j] = _mm512_sub_epi32(i, m);
			}
		}
		if (!KQ_HAS_MINS(t)) { // the rows' I - M summed exactly, together, as the gemv does one
			__m256i h[4];
			for (int j = 0; j < 4; j++)
				h[j] = _mm256_add_epi32(_mm512_castsi512_si256(v[j]), _mm512_extracti64x4_epi64(v[j], 1));
			const __m256i s = _mm256_hadd_epi32(_mm256_hadd_epi32(h[0], h[1]), _mm256_hadd_epi32(h[2], h[3]));
			const __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
			const __m128 d4 = _mm_mul_ps(_mm_set1_ps(o.d), _mm_loadu_ps(dxs));
			acc4 = _mm_fmadd_ps(_mm_cvtepi32_ps(s4), d4, acc4);
		}
	}
	float out4[4];
	_mm_storeu_ps(out4, acc4);
	for (int j = 0; j < NX; j++) dst[j * ldd] = KQ_HAS_MINS(t) ? kq_hsum16(acc[j]) : out4[j];
}

#define KQ_GEMVN512_FN(T, tn, NX)                                                                  \
	static KQ_B void KQ_N(kq_gemvn_##tn##_##NX)(const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb, \
	                                            int64_t nb, int64_t r0, int64_t r1, float *dst, int64_t ldd) { \
		for (int64_t r = r0; r < r1; r++)                                                      \
			KQ_N(kq_gemvn_row)(T, NX, w + r * wrb, x, xrb, nb, dst + r, ldd, w + r1 * wrb);  \
	}
#define KQ_GEMVN512_TYPE(T, tn) KQ_GEMVN512_FN(T, tn, 2) KQ_GEMVN512_FN(T, tn, 3) KQ_GEMVN512_FN(T, tn, 4)
KQ_GEMVN512_TYPE(EMBER_Q2_K, q2k)
KQ_GEMVN512_TYPE(EMBER_Q3_K, q3k)
KQ_GEMVN512_TYPE(EMBER_Q4_K, q4k)
KQ_GEMVN512_TYPE(EMBER_Q5_K, q5k)
KQ_GEMVN512_TYPE(EMBER_Q6_K, q6k)
#undef KQ_GEMVN512_TYPE
#undef KQ_GEMVN512_FN

#define KQ_GN3(tn) {KQ_N(kq_gemvn_##tn##_2), KQ_N(kq_gemvn_##tn##_3), KQ_N(kq_gemvn_##tn##_4)}
// [kq_type_index][NX - 2]
static void (*const KQ_N(kq_gemvns)[5][3])(const uint8_t *, int64_t, const uint8_t *, int64_t, int64_t, int64_t,
                                            int64_t, float *, int64_t) = {
	KQ_GN3(q2k), KQ_GN3(q3k), KQ_GN3(q4k), KQ_GN3(q5k), KQ_GN3(q6k),
};
#undef KQ_GN3

// ---- gemm: decode once into kq_block, 4x4 register tiles ----

#define KQ_UNPACK512_FN(T, tn)                                                                     \
	static KQ_B void KQ_N(kq_unpack_##tn)(const uint8_t *w, int64_t n, kq_block *u) {              \
		for (int64_t b = 0; b < n; b++, w += kq_wbytes(T), u++) {                              \
			kq_dec256 o;                                                                   \
			kq_dec_meta(T, w, &o);                                                         \
			for (int h = 0; h < 2; h++) {                                                  \
				__m512i q[2];                                                          \
				kq_dec512_half(T, w, h, q);                                            \
				_mm512_store_si512((void *)(u->q + 128 * h), q[0]);                    \
				_mm512_store_si512((void *)(u->q + 128 * h + 64), q[1]);               \
			}                                                                              \
			for (int v = 0; v < 4; v++) _mm512_store_si512((void *)(u->scv + 32 * v), kq_scv512(o.sc, v)); \
			_mm256_store_si256((__m256i *)u->sc, o.sc);                                    \
			_mm256_store_si256((__m256i *)u->mn, o.mn);                                    \
			u->d = o.d;                                                                    \
			u->dmn = o.dmn;                                                                \
		}                                                                                      \
	}
KQ_UNPACK512_FN(EMBER_Q2_K, q2k)
KQ_UNPACK512_FN(EMBER_Q3_K, q3k)
KQ_UNPACK512_FN(EMBER_Q4_K, q4k)
KQ_UNPACK512_FN(EMBER_Q5_K, q5k)
KQ_UNPACK512_FN(EMBER_Q6_K, q6k)
#undef KQ_UNPACK512_FN

// The tile of NR (<= 4) weight rows (u[r*ub + b]) by NX (<= 4) activation rows:
// dst[j*ldd + r] (+)= dot. Lane p = 4r + j of the per-block sums.
KQ_B_INLINE void KQ_N(kq_tile)(int MINS, int NR, int NX, const kq_block *u, int64_t ub, const uint8_t *x,
                               int64_t xrb, int64_t nb, float *dst, int64_t ldd, int add) {
	__m512 facc = _mm512_setzero_ps();
	const __m512i zero = _mm512_setzero_si512();
	for (int64_t b = 0; b < nb; b++) {
		const uint8_t *xb = x + b * KQ_Q8K_BYTES;
		__m512i acc[16];
		for (int i = 0; i < 16; i++) acc[i] = zero;
		for (int v = 0; v < 4; v++) {
			__m512i w[4], s[4];
			for (int r = 0; r < NR; r++) {
				w[r] = _mm512_load_si512((const void *)(u[r * ub + b].q + 64 * v));
				s[r] = _mm512_load_si512((const void *)(u[r * ub + b].scv + 32 * v));
				KQ_REG512(w[r]);
				KQ_REG512(s[r]);
			}
			for (int j = 0; j < NX; j++) {
				__m512i xv = _mm512_loadu_si512((const void *)(xb + j * xrb + KQ_Q8K_QS + 64 * v));
				KQ_REG512(xv);
				for (int r = 0; r < NR; r++)
					acc[4 * r + j] = KQ_MADD_ACC(acc[4 * r + j], _mm512_maddubs_epi16(w[r], xv), s[r]);
			}
		}
		// M of pair p = 4r + j in lane p: sum over the eight int16 pairs t of madd(mn_r word t,
		// bsums_j word t), both transposed into lane order by two-source permutes.
		float dxs[4] = {0, 0, 0, 0}, dws[4] = {0, 0, 0, 0}, dms[4] = {0, 0, 0, 0};
		__m256i bs[4], mn[4];
		for (int j = 0; j < 4; j++)
			bs[j] = j < NX ? _mm256_loadu_si256((const __m256i *)(xb + j * xrb + KQ_Q8K_BSUMS)) : _mm256_setzero_si256();
		for (int r = 0; r < 4; r++) {
			mn[r] = r < NR ? _mm256_load_si256((const __m256i *)u[r * ub + b].mn) : _mm256_setzero_si256();
			if (r < NR) {
				dws[r] = u[r * ub + b].d;
				dms[r] = u[r * ub + b].dmn;
			}
		}
		for (int j = 0; j < NX; j++) dxs[j] = kq_rdf32(xb + j * xrb);
		const __m512i bs01 = _mm512_inserti64x4(_mm512_castsi256_si512(bs[0]), bs[1], 1);
		const __m512i bs23 = _mm512_inserti64x4(_mm512_castsi256_si512(bs[2]), bs[3], 1);
		const __m512i mn01 = _mm512_inserti64x4(_mm512_castsi256_si512(mn[0]), mn[1], 1);
		const __m512i mn23 = _mm512_inserti64x4(_mm512_castsi256_si512(mn[2]), mn[3], 1);
		// lane p: bsums of row j = p%4 (word t: index 8j + t), mins of row r = p/4 (8r + t)
		const __m512i jidx = _mm512_setr_epi32(0, 8, 16, 24, 0, 8, 16, 24, 0, 8, 16, 24, 0, 8, 16, 24);
		const __m512i ridx = _mm512_setr_epi32(0, 0, 0, 0, 8, 8, 8, 8, 16, 16, 16, 16, 24, 24, 24, 24);
		__m512i mred = zero;
		for (int t = 0; t < 8; t++) {
			const __m512i tt = _mm512_set1_epi32(t);
			__m512i bt = _mm512_permutex2var_epi32(bs01, _mm512_add_epi32(jidx, tt), bs23);
			__m512i mt = _mm512_permutex2var_epi32(mn01, _mm512_add_epi32(ridx, tt), mn23);
			mred = KQ_MADD_ACC(mred, bt, mt);
		}
		__m512i ired = kq_reduce16(acc);
		const __m512 dx = _mm512_broadcast_f32x4(_mm_loadu_ps(dxs));
		const __m512i rsel = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
		const __m512 dw = _mm512_permutexvar_ps(rsel, _mm512_castps128_ps512(_mm_loadu_ps(dws)));
		if (MINS) {
			const __m512 dm = _mm512_permutexvar_ps(rsel, _mm512_castps128_ps512(_mm_loadu_ps(dms)));
			facc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(ired), _mm512_mul_ps(dw, dx), facc);
			facc = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(mred), _mm512_mul_ps(dm, dx), facc);
		} else {
			facc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(ired, mred)), _mm512_mul_ps(dw, dx), facc);
		}
	}
	float out[16];
	_mm512_storeu_ps(out, facc);
	for (int r = 0; r < NR; r++)
		for (int j = 0; j < NX; j++) {
			float *p = dst + j * ldd + r;
			*p = add ? *p + out[4 * r + j] : out[4 * r + j];
		}
}

#define KQ_TILE512_FN(M, NR, NX)                                                                   \
	static KQ_B void KQ_N(kq_tile_##M##_##NR##x##NX)(const kq_block *u, int64_t ub, const uint8_t *x, \
	                                                  int64_t xrb, int64_t nb, float *dst, int64_t ldd, int add) { \
		KQ_N(kq_tile)(M, NR, NX, u, ub, x, xrb, nb, dst, ldd, add);                            \
	}
#define KQ_TILE512_ROW(M, NR)                                                                      \
	KQ_TILE512_FN(M, NR, 1) KQ_TILE512_FN(M, NR, 2) KQ_TILE512_FN(M, NR, 3) KQ_TILE512_FN(M, NR, 4)
KQ_TILE512_ROW(0, 1) KQ_TILE512_ROW(0, 2) KQ_TILE512_ROW(0, 3) KQ_TILE512_ROW(0, 4)
KQ_TILE512_ROW(1, 1) KQ_TILE512_ROW(1, 2) KQ_TILE512_ROW(1, 3) KQ_TILE512_ROW(1, 4)
#undef KQ_TILE512_ROW
#undef KQ_TILE512_FN

#define KQ_T4(M, NR) {KQ_N(kq_tile_##M##_##NR##x1), KQ_N(kq_tile_##M##_##NR##x2), KQ_N(kq_tile_##M##_##NR##x3), KQ_N(kq_tile_##M##_##NR##x4)}
static void (*const KQ_N(kq_tiles)[2][4][4])(const kq_block *, int64_t, const uint8_t *, int64_t, int64_t, float *,
                                           int64_t, int) = {
	{KQ_T4(0, 1), KQ_T4(0, 2), KQ_T4(0, 3), KQ_T4(0, 4)},
	{KQ_T4(1, 1), KQ_T4(1, 2), KQ_T4(1, 3), KQ_T4(1, 4)},
};
#undef KQ_T4

static KQ_B void KQ_N(kq_gemm)(int t, const uint8_t *w, int64_t wrb, const uint8_t *xq, int64_t xrb, int64_t nx,
                               int64_t nb, int64_t r0, int64_t r1, float *dst, int64_t ldd) {
	const int ti = kq_type_index(t);
	if (nx == 1) {
		KQ_N(kq_gemvs)[ti](w, wrb, xq, nb, r0, r1, dst);
		return;
	}
	if (nx <= (KQ_HAS_MINS(t) ? KQ_GEMVN_MAX_MINS : KQ_GEMVN_MAX)) { // a few rows: kq_gemvn, 4 a pass
		// Weight rows in runs of 32, so a second group of activation rows finds them in
		// the cache instead of reading them from memory again.
		for (int64_t a = r0; a < r1; a += 32) {
			const int64_t z = r1 - a > 32 ? a + 32 : r1;
			for (int64_t j = 0; j < nx; j += 4) {
				const int nj = nx - j >= 4 ? 4 : (int)(nx - j);
				if (nj == 1)
					KQ_N(kq_gemvs)[ti](w, wrb, xq + j * xrb, nb, a, z, dst + j * ldd);
				else
					KQ_N(kq_gemvns)[ti][nj - 2](w, wrb, xq + j * xrb, xrb, nb, a, z, dst + j * ldd, ldd);
			}
		}
		return;
	}
	enum { KB = 8, XC = 64 };
	void (*unpack)(const uint8_t *, int64_t, kq_block *) =
		t == EMBER_Q2_K ? KQ_N(kq_unpack_q2k) : t == EMBER_Q3_K ? KQ_N(kq_unpack_q3k)
		: t == EMBER_Q4_K ? KQ_N(kq_unpack_q4k) : t == EMBER_Q5_K ? KQ_N(kq_unpack_q5k) : KQ_N(kq_unpack_q6k);
	const int64_t bb = kq_wbytes(t);
	kq_block ubuf[4 * KB];
	for (int64_t i0 = 0; i0 < nx; i0 += XC) {
		const int64_t ni = nx - i0 < XC ? nx - i0 : XC;
		for (int64_t r = r0; r < r1; r += 4) {
			const int nr = r1 - r >= 4 ? 4 : (int)(r1 - r);
			for (int64_t k0 = 0; k0 < nb; k0 += KB) {
				const int64_t kn = nb - k0 < KB ? nb - k0 : KB;
				for (int i = 0; i < nr; i++) unpack(w + (r + i) * wrb + k0 * bb, kn, ubuf + i * KB);
				kq_prefetch_unpack(w, wrb, bb, nb, r, 4, r1, k0, KB);
				for (int64_t j = 0; j < ni; j += 4) {
					const int nj = ni - j >= 4 ? 4 : (int)(ni - j);
					KQ_N(kq_tiles)[KQ_HAS_MINS(t)][nr - 1][nj - 1](ubuf, KB, xq + (i0 + j) * xrb + k0 * KQ_Q8K_BYTES,
					                                              xrb, kn, dst + (i0 + j) * ldd + r, ldd, k0 > 0);
				}
			}
		}
	}
}

#undef KQ_MADD_ACC
#undef KQ_B
#undef KQ_B_INLINE
