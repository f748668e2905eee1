// elem_x86.h: the vectorized exp and half helpers shared by the AVX2 row ops and
// attention kernels. Include after the file's target pragma and lg_x86.h.
#ifndef EMBER_ELEM_X86_H
#define EMBER_ELEM_X86_H

// The Cephes expf scheme on 8 lanes: n = round(x / ln2), r = x - n ln2 (two-constant
// Cody-Waite), e^r by a degree-7 polynomial (1 + r + r^2 P(r)), then 2^n applied in two
// halves so that results down to the subnormals and up to overflow (inf) are right.
// Error about 1 ulp; exp(NaN) = NaN, exp(-inf) = 0, exp(+inf) = inf.
LGA __m256 ea_exp(__m256 x) {
	x = _mm256_max_ps(_mm256_set1_ps(-104.0f), _mm256_min_ps(_mm256_set1_ps(89.0f), x)); // NaN stays NaN
	const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
	                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	__m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
	r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
	__m256 p = _mm256_set1_ps(1.9875691500e-4f);
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
	p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r);
	p = _mm256_add_ps(p, _mm256_set1_ps(1.0f));
	const __m256i ni = _mm256_cvtps_epi32(n);
	const __m256i n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
	const __m256i bias = _mm256_set1_epi32(127);
	const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
	const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
	return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

// Round 8 floats to halves and back.
LGA __m256 ea_round16(__m256 v) { return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)); }

LGA __m256 ea_load16(const uint16_t *p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }

// Up to 8 halves (n < 8 reads only n), zero-filled.
LGA __m256 ea_load16_part(const uint16_t *p, int64_t n) {
	uint16_t b[8] = {0};
	memcpy(b, p, (size_t)n * 2);
	return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)b));
}

// ea_score1 is one position's scaled score in the single-head kernels: one 8-lane chain
// over the first hd8 dims of q16 and the f16 K row kt, then the last hrem (< 8) dims
// against qtail (q's last hrem floats, zero-padded), reduced by lga_hsum.
LGA float ea_score1(const float *q16, __m256 qtail, const uint16_t *kt, int64_t hd8, int64_t hrem, float scale) {
	__m256 a = _mm256_setzero_ps();
	for (int64_t d = 0; d < hd8; d += 8) a = _mm256_fmadd_ps(_mm256_loadu_ps(q16 + d), ea_load16(kt + d), a);
	if (hrem) a = _mm256_fmadd_ps(qtail, ea_load16_part(kt + hd8, hrem), a);
	return scale * lga_hsum(a);
}

// ea_probs_f16 turns the exps s[t..n_kv) into probabilities e * inv rounded to f16, eight
// at a time, then one at a time.
LGA void ea_probs_f16(float *s, int64_t t, int64_t n_kv, float inv) {
	const __m256 vinv = _mm256_set1_ps(inv);
	for (; t + 8 <= n_kv; t += 8) _mm256_storeu_ps(s + t, ea_round16(_mm256_mul_ps(_mm256_loadu_ps(s + t), vinv)));
	for (; t < n_kv; t++) s[t] = lg_h2f(lg_f2h(s[t] * inv));
}

// The accumulators of a V tile of the grouped attention kernels: acc[i*W + w] is out[i*vhd
// + 8w ..] (H heads of vhd floats, W vectors each).
LGA void ea_tile_load(const int H, const int W, __m256 *acc, const float *out, int64_t vhd) {
	LG_UNROLL
	for (int i = 0; i < H; i++) {
		LG_UNROLL
		for (int w = 0; w < W; w++) acc[i * W + w] = _mm256_loadu_ps(out + i * vhd + 8 * w);
	}
}

LGA void ea_tile_store(const int H, const int W, const __m256 *acc, float *out, int64_t vhd) {
	LG_UNROLL
	for (int i = 0; i < H; i++) {
		LG_UNROLL
		for (int w = 0; w < W; w++) _mm256_storeu_ps(out + i * vhd + 8 * w, acc[i * W + w]);
	}
}

// The scaled scores of g heads at the four positions of a block from their unreduced
// dots h[i*4 + p] (head i, position p; h holds 4g + 4 vectors, the last four scratch) into
// s[0..4) of each head (heads n_kv floats apart): two heads per lga_hsum8, lanes 0-3
// head i, 4-7 head i+1.
LGA void ea_scores_store(int64_t g, __m256 *h, float scale, float *s, int64_t n_kv) {
	const __m128 vs = _mm_set1_ps(scale);
	for (int64_t i = 0; i < g; i += 2) {
		if (i + 1 == g)
			for (int j = 4; j < 8; j++) h[i * 4 + j] = _mm256_setzero_ps();
		const __m256 r = lga_hsum8(h + i * 4);
		_mm_storeu_ps(s + i * n_kv, _mm_mul_ps(_mm256_castps256_ps128(r), vs));
		if (i + 1 < g) _mm_storeu_ps(s + (i + 1) * n_kv, _mm_mul_ps(_mm256_extractf128_ps(r, 1), vs));
	}
}

#endif
