// kq_rows8.h: the K-quant gemm of batches (more than KQ_GEMVN_MAX activation rows) on
// AVX2, eight weight rows a vector. Included once by kq_avx2.c; the AVX2 form of
// kq_vnni16.h (which explains the layout), for CPUs without VNNI.
//
// Lane r of a vector is weight row r of a group of eight: a row's quants are interleaved
// four bytes at a time when a block is unpacked (kq_blk8), and one vpmaddubsw takes four
// elements of all eight rows against four activation bytes broadcast from memory, giving
// two int16 pair sums a row. Those are added in int16 over as many 4-element groups as
// cannot overflow (KQ_R8_RUN: the type's largest quant times 128, twice a group) and
// under one scale, then one vpmaddwd by the rows' scales (each in both int16 halves of
// its lane) turns them into int32 and adds the halves; M is eight vpmaddwd of the rows'
// offset pairs against the activation's bsums. Both are the exact integers kq_tile
// computes (kq.h), and each pair's float steps are the tiles' in the same order, so the
// results have the 2x4 tiles' bits (and the AVX-512 tiles', which are the same).
//
// With KQ_R8_VNNI (kq_avxvnni.c: AVX2 CPUs with AVX-VNNI, Intel Alder Lake and later)
// one VEX vpdpbusd takes the place of vpmaddubsw and the int16 adds: four elements of
// all eight rows into int32 per group, summed over the groups of one scale (16 elements,
// or 32 for Q4_K and Q5_K), then multiplied by the rows' scales (vpmulld) into I, as
// kq_vnni16.h does with sixteen rows. The same exact integers, so the same bits.

#ifndef KQ_R8
#define KQ_R8 KQ_AVX2
#define KQ_R8_INLINE KQ_AVX2_INLINE
#endif
#ifndef KQ_R8_VNNI
#define KQ_R8_VNNI 0
#endif

// One block of eight weight rows (lane r, or bytes 4r..4r+3 of q[g], is row r): q[g]:
// quants 4g..4g+3; sc[s]: the scale of elements 16s..16s+15 in both int16 halves;
// mn[p]: the offsets of elements 32p..32p+15 and 32p+16..32p+31 as an int16 pair; d,
// dmn the floats.
typedef struct {
	uint8_t q[64][32];
	int32_t sc[16][8];
	int32_t mn[8][8];
	float d[8], dmn[8];
} KQ_ALIGN(64) kq_blk8;

// kq_tr8 transposes an 8x8 matrix of int32, a row a vector: a[i] lane j becomes lane i
// of a[j].
KQ_R8_INLINE void kq_tr8(__m256i a[8]) {
	__m256i t[8], u[8];
	for (int i = 0; i < 4; i++) {
		t[2 * i] = _mm256_unpacklo_epi32(a[2 * i], a[2 * i + 1]);
		t[2 * i + 1] = _mm256_unpackhi_epi32(a[2 * i], a[2 * i + 1]);
	}
	// u[4q + e], 128-bit lane L: rows 4q..4q+3 of column 4L + e
	for (int q = 0; q < 2; q++) {
		u[4 * q] = _mm256_unpacklo_epi64(t[4 * q], t[4 * q + 2]);
		u[4 * q + 1] = _mm256_unpackhi_epi64(t[4 * q], t[4 * q + 2]);
		u[4 * q + 2] = _mm256_unpacklo_epi64(t[4 * q + 1], t[4 * q + 3]);
		u[4 * q + 3] = _mm256_unpackhi_epi64(t[4 * q + 1], t[4 * q + 3]);
	}
	for (int e = 0; e < 4; e++) {
		a[e] = _mm256_permute2x128_si256(u[e], u[4 + e], 0x20);
		a[4 + e] = _mm256_permute2x128_si256(u[e], u[4 + e], 0x31);
	}
}

// kq_unpack8 decodes blocks [0, kn) of rows w, w + wrb, ... (nr of them, 1..8; the lanes
// past nr repeat row nr - 1 and are never stored) into u[0..kn).
static KQ_R8 void kq_unpack8(int t, const uint8_t *w, int64_t wrb, int nr, int64_t kn, kq_blk8 *u) {
	const int64_t bb = kq_wbytes(t);
	__m256i tmp[8][8], sct[2][8], mnt[8]; // row r: its quants, its scales (twice), its offset pairs
	for (int64_t b = 0; b < kn; b++, u++) {
		for (int r = 0; r < 8; r++) {
			kq_dec256 o;
			kq_dec(t, w + (int64_t)(r < nr ? r : nr - 1) * wrb + b * bb, &o);
			for (int v = 0; v < 8; v++) tmp[v][r] = o.q[v];
			for (int h = 0; h < 2; h++) {
				const __m256i s = _mm256_cvtepi16_epi32(h ? _mm256_extracti128_si256(o.sc, 1) : _mm256_castsi256_si128(o.sc));
				sct[h][r] = _mm256_or_si256(_mm256_and_si256(s, _mm256_set1_epi32(0xffff)), _mm256_slli_epi32(s, 16));
			}
			mnt[r] = o.mn;
			u->d[r] = o.d;
			u->dmn[r] = o.dmn;
		}
		for (int v = 0; v < 8; v++) {
			kq_tr8(tmp[v]);
			for (int i = 0; i < 8; i++) _mm256_store_si256((__m256i *)u->q[8 * v + i], tmp[v][i]);
		}
		for (int h = 0; h < 2; h++) {
			kq_tr8(sct[h]);
			for (int i = 0; i < 8; i++) _mm256_store_si256((__m256i *)u->sc[8 * h + i], sct[h][i]);
		}
		kq_tr8(mnt);
		for (int i = 0; i < 8; i++) _mm256_store_si256((__m256i *)u->mn[i], mnt[i]);
	}
}

// KQ_R8_RUN(t): the 4-element groups whose int16 pair sums may be added before they
// overflow (|q| <= 15, 31, 7, 3, 63 times |x| <= 128, two products a pair), within one
// scale (16 elements, or 32 for Q4_K and Q5_K).
//
// With VNNI the sums are int32 and a run is one scale's groups. KQ_R8_ACC adds a group's
// products (four a row) to a run's sums, KQ_R8_SC loads a scale vector (as an int32 with
// VNNI; as the int16 pair vpmaddwd takes without), KQ_R8_SCALED is a run's sums times it.
#if KQ_R8_VNNI
#define KQ_R8_RUN(t) ((t) == EMBER_Q4_K || (t) == EMBER_Q5_K ? 8 : 4)
#define KQ_R8_ACC(a, w, x) _mm256_dpbusd_avx_epi32(a, w, x)
#define KQ_R8_SC(p) _mm256_srai_epi32(_mm256_load_si256(p), 16)
#define KQ_R8_SCALED(a, sc) _mm256_mullo_epi32(a, sc)
#else
#define KQ_R8_RUN(t) ((t) == EMBER_Q4_K ? 8 : (t) == EMBER_Q6_K ? 2 : 4)
#define KQ_R8_ACC(a, w, x) _mm256_add_epi16(a, _mm256_maddubs_epi16(w, x))
#define KQ_R8_SC(p) _mm256_load_si256(p)
#define KQ_R8_SCALED(a, sc) _mm256_madd_epi16(a, sc)
#endif

// kq_tile8 adds block u's dot with NJ activation rows' Q8_K block x (x + j*xrb) to
// facc[j] (lane r: weight row r), as the tiles' float steps. RUN: KQ_R8_RUN of the type
// (a run never crosses a scale: u->sc[g / 4] is the scale of group g).
KQ_R8_INLINE void kq_tile8(const int RUN, const int MINS, const int NJ, const kq_blk8 *u,
                             const uint8_t *x, int64_t xrb, float (*facc)[8]) {
	__m256i I[4], A[4];
	for (int j = 0; j < NJ; j++) I[j] = _mm256_setzero_si256();
	for (int g0 = 0; g0 < 64; g0 += RUN) {
		const __m256i sc = KQ_R8_SC((const __m256i *)u->sc[g0 / 4]);
#if KQ_R8_VNNI
		// Runs of eight groups (Q4_K, Q5_K) take two chains a row (even and odd groups):
		// vpdpbusd's latency (~5 cycles) over four rows' chains alone leaves half its
		// throughput unused. Runs of four lose with two (the extra add a run costs more):
		// measured on Golden Cove cores, build/PERFORMANCE.md (session 82).
		if (RUN == 8) {
			__m256i B[4];
			for (int j = 0; j < NJ; j++) A[j] = B[j] = _mm256_setzero_si256();
			for (int g = g0; g < g0 + RUN; g += 2) {
				__m256i wv = _mm256_load_si256((const __m256i *)u->q[g]), wu = _mm256_load_si256((const __m256i *)u->q[g + 1]);
				for (int j = 0; j < NJ; j++) {
					int32_t xa, xb;
					memcpy(&xa, x + j * xrb + KQ_Q8K_QS + 4 * g, 4);
					memcpy(&xb, x + j * xrb + KQ_Q8K_QS + 4 * g + 4, 4);
					A[j] = KQ_R8_ACC(A[j], wv, _mm256_set1_epi32(xa));
					B[j] = KQ_R8_ACC(B[j], wu, _mm256_set1_epi32(xb));
				}
			}
			for (int j = 0; j < NJ; j++) A[j] = _mm256_add_epi32(A[j], B[j]);
		} else
#endif
		{
			for (int j = 0; j < NJ; j++) A[j] = _mm256_setzero_si256();
			for (int g = g0; g < g0 + RUN; g++) {
				__m256i wv = _mm256_load_si256((const __m256i *)u->q[g]);
				KQ_REG(wv);
				for (int j = 0; j < NJ; j++) {
					int32_t xb;
					memcpy(&xb, x + j * xrb + KQ_Q8K_QS + 4 * g, 4);
					A[j] = KQ_R8_ACC(A[j], wv, _mm256_set1_epi32(xb));
					KQ_REG(A[j]); // in order, group by group: hoisted loads spilled I
				}
			}
		}
		for (int j = 0; j < NJ; j++) I[j] = _mm256_add_epi32(I[j], KQ_R8_SCALED(A[j], sc));
	}
	for (int j = 0; j < NJ; j++) A[j] = _mm256_setzero_si256(); // M
	for (int p = 0; p < 8; p++) {
		const __m256i mv = _mm256_load_si256((const __m256i *)u->mn[p]);
		for (int j = 0; j < NJ; j++) {
			int32_t bs;
			memcpy(&bs, x + j * xrb + KQ_Q8K_BSUMS + 4 * p, 4);
			A[j] = _mm256_add_epi32(A[j], _mm256_madd_epi16(mv, _mm256_set1_epi32(bs)));
		}
	}
	const __m256 dw = _mm256_load_ps(u->d), dm = _mm256_load_ps(u->dmn);
	for (int j = 0; j < NJ; j++) {
		const __m256 dx = _mm256_set1_ps(kq_rdf32(x + j * xrb));
		__m256 f = _mm256_load_ps(facc[j]);
		if (MINS) {
			f = _mm256_fmadd_ps(_mm256_cvtepi32_ps(I[j]), _mm256_mul_ps(dw, dx), f);
			f = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(A[j]), _mm256_mul_ps(dm, dx), f);
		} else {
			f = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(I[j], A[j])), _mm256_mul_ps(dw, dx), f);
		}
		_mm256_store_ps(facc[j], f);
	}
}

// kq_tiles8 runs kq_tile8 over ni activation rows, four at a time.
KQ_R8_INLINE void kq_tiles8(const int RUN, const int MINS, const kq_blk8 *u, const uint8_t *x,
                              int64_t xrb, int64_t ni, float (*facc)[8]) {
	int64_t j = 0;
	for (; j + 4 <= ni; j += 4) kq_tile8(RUN, MINS, 4, u, x + j * xrb, xrb, facc + j);
	switch (ni - j) {
	case 3: kq_tile8(RUN, MINS, 3, u, x + j * xrb, xrb, facc + j); break;
	case 2: kq_tile8(RUN, MINS, 2, u, x + j * xrb, xrb, facc + j); break;
	case 1: kq_tile8(RUN, MINS, 1, u, x + j * xrb, xrb, facc + j); break;
	}
}

#define KQ_TILES8_FN(tn, T)                                                                        \
	static KQ_R8 void kq_tiles8_##tn(const kq_blk8 *u, const uint8_t *x, int64_t xrb, int64_t ni,  \
	                                   float (*facc)[8]) {                                        \
		kq_tiles8(KQ_R8_RUN(T), KQ_HAS_MINS(T), u, x, xrb, ni, facc);        \
	}
KQ_TILES8_FN(q2k, EMBER_Q2_K)
KQ_TILES8_FN(q3k, EMBER_Q3_K)
KQ_TILES8_FN(q4k, EMBER_Q4_K)
KQ_TILES8_FN(q5k, EMBER_Q5_K)
KQ_TILES8_FN(q6k, EMBER_Q6_K)
#undef KQ_TILES8_FN

// kq_gemm8: ember_kq_gemm_avx2's contract for nx > KQ_GEMVN_MAX activation rows.
static KQ_R8 void kq_gemm8(int t, const uint8_t *w, int64_t wrb, const uint8_t *xq, int64_t xrb, int64_t nx,
                             int64_t nb, int64_t r0, int64_t r1, float *dst, int64_t ldd) {
	enum { KB = 8, XC = 128 };
	void (*tiles)(const kq_blk8 *, const uint8_t *, int64_t, int64_t, float(*)[8]) =
		t == EMBER_Q2_K ? kq_tiles8_q2k : t == EMBER_Q3_K ? kq_tiles8_q3k : t == EMBER_Q4_K ? kq_tiles8_q4k
		: t == EMBER_Q5_K ? kq_tiles8_q5k : kq_tiles8_q6k;
	const int64_t bb = kq_wbytes(t);
	kq_blk8 ub[KB];
	float facc[XC][8] KQ_ALIGN(32);
	for (int64_t i0 = 0; i0 < nx; i0 += XC) {
		const int64_t ni = nx - i0 < XC ? nx - i0 : XC;
		for (int64_t r = r0; r < r1; r += 8) {
			const int nr = r1 - r >= 8 ? 8 : (int)(r1 - r);
			for (int64_t k0 = 0; k0 < nb; k0 += KB) {
				const int64_t kn = nb - k0 < KB ? nb - k0 : KB;
				kq_unpack8(t, w + r * wrb + k0 * bb, wrb, nr, kn, ub);
				kq_prefetch_unpack(w, wrb, bb, nb, r, 8, r1, k0, KB);
				memset(facc, 0, sizeof(float) * 8 * ni);
				for (int64_t b = 0; b < kn; b++)
					tiles(ub + b, xq + i0 * xrb + (k0 + b) * KQ_Q8K_BYTES, xrb, ni, facc);
				for (int64_t j = 0; j < ni; j++) {
					float *p = dst + (i0 + j) * ldd + r;
					for (int i = 0; i < nr; i++) p[i] = k0 > 0 ? p[i] + facc[j][i] : facc[j][i];
				}
			}
		}
	}
}
