// lg_direct.h: the direct (decode and small-batch) kernel of Q8_0 and the loops that run
// the direct kernels over rows and activation rows (LGA_DIRECT_FN), shared by lg_avx2.c
// and, with LG_DIRECT_VNNI, lg_avxvnni.c, whose Q8_0 products are one VEX vpdpbusd each
// (weights made unsigned, plus 128, taken back per lane with -128 times the lane's four
// activations: the AVX2 form's exact lane sums, so its bits). Include after lg_x86.h.

#ifndef LG_DIRECT_VNNI
#define LG_DIRECT_VNNI 0
#endif

#define LG_DIRECT_NX 3
// Rows up to this many bytes are short: lga_direct_q prefetches a later group of rows
// (LG_PF_ROWS ahead) as one stream (below). Q8_0 on 2 EPYC cores (session 16, a C
// harness alternating the two ways over 400 MB of weights): 2048x1408 (V2-Lite's down
// experts) 8.6 -> 11.2 GB/s on one thread, 10.6 -> 12.9 on two; 2048x2048 6.9 -> 7.7 and
// 12.0 -> 13.2; 4096x2816 even; 4096x4096 13.2 -> 12.1, 4096x14336 14.1 -> 11.2 (long
// rows keep their own).
#define LG_SHORT_ROW 2560
// Weight rows per run: each group of LG_DIRECT_NX activation rows goes over a run while it
// is in the cache, so more rows do not read the weights from memory again.
#define LG_RUN 32
// Short rows' stream prefetch runs LG_PF_ROWS rows ahead: the group after next (8) rather
// than the next (4). Session 70, two threads on these AVX2 kernels (EMBER_CPU_ISA=avx2),
// the builds alternating: DeepSeek-V2-Lite Q4_K_M tg128 (its Q8_0 and Q5_0 experts)
// 1.00-1.06x, 6 of 6 (median ~1.015); Llama-3.2-1B Q8_0 0.99-1.03x (even).
#ifndef LG_PF_ROWS
#define LG_PF_ROWS 8
#endif

// Sum of products of signed w and x (|x| <= 127) in 8 int32 lanes.
LGA __m256i lga_dot_s(__m256i aw, __m256i w, __m256i x) {
	return _mm256_madd_epi16(_mm256_maddubs_epi16(aw, _mm256_sign_epi8(x, w)), _mm256_set1_epi16(1));
}

// NR weight rows (1..4) against NX activation rows (1..3), quantized types.
LGA void lga_direct_q(const int T, const int NR, const int NX, const uint8_t *w, int64_t wrb,
                      const uint8_t *x, int64_t xrb, int64_t nb, float *dst, int64_t ldd) {
	const int wbs = lg_type_bytes(T), is1 = lga_is1(T), xbs = lga_xbytes(T), xqo = lga_xqs(T);
	const int off = lga_offset(T);
	__m256 acc[3][4];
	float accm[3][4];
	for (int i = 0; i < NX; i++)
		for (int r = 0; r < NR; r++) acc[i][r] = _mm256_setzero_ps(), accm[i][r] = 0;
	// A later group of rows (the caller steps 4 at a time; they lie one after another):
	// short rows as one stream LG_PF_ROWS rows ahead, NR * wbs bytes a block, else each
	// row's block in the next group.
	const int shortrow = wrb <= LG_SHORT_ROW;
	const uint8_t *next = w + LG_PF_ROWS * wrb;
	for (int64_t b = 0; b < nb; b++) {
		__m256i xv[3], xc[3];
		float dx[3], sx[3];
		if (shortrow) {
			const char *p = (const char *)(next + b * NR * wbs);
			_mm_prefetch(p, _MM_HINT_T0);
			_mm_prefetch(p + 64, _MM_HINT_T0);
			if (NR * wbs > 128) _mm_prefetch(p + 128, _MM_HINT_T0);
		}
		for (int i = 0; i < NX; i++) {
			const uint8_t *xb = x + i * xrb + b * xbs;
			xv[i] = _mm256_loadu_si256((const __m256i *)(xb + xqo));
			dx[i] = lga_h2f(xb);
			if (is1) sx[i] = lga_h2f(xb + 2);
			if (off) xc[i] = lga_dot_u(_mm256_set1_epi8((char)off), xv[i]);
#if LG_DIRECT_VNNI
			if (T == EMBER_Q8_0) // -128 times each lane's four activations: the start value
				xc[i] = _mm256_sub_epi32(_mm256_setzero_si256(),
				                         _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), _mm256_set1_epi8((char)0x80), xv[i]));
#endif
		}
		for (int r = 0; r < NR; r++) {
			const uint8_t *wb = w + r * wrb + b * wbs;
			// long rows: the rows of the next group of 4, each a stream of its own that the
			// hardware prefetchers pick up too late
			if (!shortrow) _mm_prefetch((const char *)(wb + 4 * wrb), _MM_HINT_T0);
			const __m256i wq = lga_wquants(T, wb);
			const float dw = lga_h2f(wb);
			const float mw = is1 ? lga_h2f(wb + 2) : 0;
			__m256i aw = wq;
#if LG_DIRECT_VNNI
			if (T == EMBER_Q8_0) aw = _mm256_xor_si256(wq, _mm256_set1_epi8((char)0x80)); // w + 128
#else
			if (T == EMBER_Q8_0) aw = _mm256_sign_epi8(wq, wq);
#endif
			for (int i = 0; i < NX; i++) {
				__m256i s;
#if LG_DIRECT_VNNI
				if (T == EMBER_Q8_0) s = _mm256_dpbusd_avx_epi32(xc[i], aw, xv[i]);
#else
				if (T == EMBER_Q8_0) s = lga_dot_s(aw, wq, xv[i]);
#endif
				else {
					s = lga_dot_u(wq, xv[i]);
					if (off) s = _mm256_sub_epi32(s, xc[i]);
				}
				acc[i][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_set1_ps(dw * dx[i]), acc[i][r]);
				if (is1) accm[i][r] += mw * sx[i];
			}
		}
	}
	for (int i = 0; i < NX; i++)
		for (int r = 0; r < NR; r++) dst[i * ldd + r] = lga_hsum(acc[i][r]) + accm[i][r];
}

#define LGA_DIRECT_CASES(FN, T, KARG)                                                                   \
	switch (nr * 4 + nxx) {                                                                              \
	case 4 + 1: FN(T, 1, 1, wp, wrb, xp, xrb, KARG, dp, ldd); break;                                     \
	case 4 + 2: FN(T, 1, 2, wp, wrb, xp, xrb, KARG, dp, ldd); break;                                     \
	case 4 + 3: FN(T, 1, 3, wp, wrb, xp, xrb, KARG, dp, ldd); break;                                     \
	case 8 + 1: FN(T, 2, 1, wp, wrb, xp, xrb, KARG, dp, ldd); break;                                     \
	case 8 + 2: FN(T, 2, 2, wp, wrb, xp, xrb, KARG, dp, ldd); break;                                     \
	case 8 + 3: FN(T, 2, 3, wp, wrb, xp, xrb, KARG, dp, ldd); break;                                     \
	case 12 + 1: FN(T, 3, 1, wp, wrb, xp, xrb, KARG, dp, ldd); break;                                    \
	case 12 + 2: FN(T, 3, 2, wp, wrb, xp, xrb, KARG, dp, ldd); break;                                    \
	case 12 + 3: FN(T, 3, 3, wp, wrb, xp, xrb, KARG, dp, ldd); break;                                    \
	case 16 + 1: FN(T, 4, 1, wp, wrb, xp, xrb, KARG, dp, ldd); break;                                    \
	case 16 + 2: FN(T, 4, 2, wp, wrb, xp, xrb, KARG, dp, ldd); break;                                    \
	default: FN(T, 4, 3, wp, wrb, xp, xrb, KARG, dp, ldd); break;                                        \
	}

#define LGA_DIRECT_FN(NAME, FN, T, KARG)                                                                \
	static void NAME(const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb, int64_t nx,          \
	                 int64_t kk, int64_t r0, int64_t r1, float *dst, int64_t ldd) {                      \
		for (int64_t a = r0; a < r1; a += LG_RUN)                                                        \
		for (int64_t i0 = 0; i0 < nx; i0 += LG_DIRECT_NX) {                                              \
			const int nxx = (int)(nx - i0 < LG_DIRECT_NX ? nx - i0 : LG_DIRECT_NX);                      \
			const int64_t z = r1 - a < LG_RUN ? r1 : a + LG_RUN;                                         \
			for (int64_t r = a; r < z; r += 4) {                                                         \
				const int nr = (int)(z - r < 4 ? z - r : 4);                                             \
				const uint8_t *wp = w + r * wrb, *xp = x + i0 * xrb;                                     \
				float *dp = dst + i0 * ldd + r;                                                          \
				LGA_DIRECT_CASES(FN, T, KARG)                                                            \
			}                                                                                            \
		}                                                                                                \
	}
