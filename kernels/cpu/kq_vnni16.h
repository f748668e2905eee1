// kq_vnni16.h: the K-quant gemm of batches (more than KQ_GEMVN_MAX activation rows) on
// AVX-512 VNNI, sixteen weight rows a vector. Included once by kq_avx512.c.
//
// The 4x4 tiles of kq_avx512_body.h give each (weight row, activation row) pair a vector
// of partial sums over the block's elements and reduce the sixteen vectors across their
// lanes at every block, and build the offsets' term M with permutes: most of their
// instructions are not the products. Here a vector's lane r is weight row r of a group of
// sixteen, so no sum crosses lanes: the rows' quants are interleaved four bytes at a time
// when a block is unpacked (kq_blk16), and one vpdpbusd takes four elements of all
// sixteen rows against four activation bytes broadcast from memory. Per 16 or 32
// elements of one scale the int32 sums are multiplied by the rows' scales (vpmulld) and
// added into I; M is eight vpdpwssd of the rows' offsets against the activation's bsums,
// two at a time. Both are the exact integers the tiles compute (kq.h), and each pair's
// float steps are the tiles' in the same order (the same KB-block chunks, each started
// from zero and then added to dst), so the results have the tiles' bits.
//
// Loop order: for each group of sixteen rows and chunk of KB blocks, the blocks are
// unpacked once (kq_unpack16, 46 KB), then block by block every activation row of the XC
// in hand is taken NJ at a time, the unpacked block staying in L1 while the activation
// rows stream; each pair's float sum waits in facc. Measured on one thread (Zen 5 VM,
// BenchmarkGemmKQ, alternating builds): KQ_V16_NJ 8 ~15-20% ahead of 4 (eight
// independent vpdpbusd chains), XC 128 ~10% ahead of 64 (the unpack shared by more
// rows) and even with 256.

#define KQ_V16_TARGET KQ_512_TARGET ",avx512vnni"
#define KQ_V16 __attribute__((target(KQ_V16_TARGET)))
#define KQ_V16_INLINE static inline __attribute__((always_inline, target(KQ_V16_TARGET)))

// One block of sixteen weight rows (lane r, or bytes 4r..4r+3 of q[g], is row r):
// q[g]: quants 4g..4g+3; sc[s]: the scale of elements 16s..16s+15; mn[p]: the offsets of
// elements 32p..32p+15 and 32p+16..32p+31 as an int16 pair (the bsums' pairing); d, dmn
// the floats.
typedef struct {
	uint8_t q[64][64];
	int32_t sc[16][16];
	int32_t mn[8][16];
	float d[16], dmn[16];
} KQ_ALIGN(64) kq_blk16;

// kq_tr16 transposes a 16x16 matrix of int32, a row a vector: a[i] lane j becomes lane i
// of a[j].
KQ_V16_INLINE void kq_tr16(__m512i a[16]) {
	__m512i t[16], u[16];
	for (int i = 0; i < 8; i++) {
		t[2 * i] = _mm512_unpacklo_epi32(a[2 * i], a[2 * i + 1]);
		t[2 * i + 1] = _mm512_unpackhi_epi32(a[2 * i], a[2 * i + 1]);
	}
	// u[4q + e], 128-bit lane L: rows 4q..4q+3 of column 4L + e
	for (int q = 0; q < 4; q++) {
		u[4 * q] = _mm512_unpacklo_epi64(t[4 * q], t[4 * q + 2]);
		u[4 * q + 1] = _mm512_unpackhi_epi64(t[4 * q], t[4 * q + 2]);
		u[4 * q + 2] = _mm512_unpacklo_epi64(t[4 * q + 1], t[4 * q + 3]);
		u[4 * q + 3] = _mm512_unpackhi_epi64(t[4 * q + 1], t[4 * q + 3]);
	}
	for (int e = 0; e < 4; e++) {
		const __m512i x01 = _mm512_shuffle_i32x4(u[e], u[4 + e], 0x44), x23 = _mm512_shuffle_i32x4(u[e], u[4 + e], 0xee);
		const __m512i y01 = _mm512_shuffle_i32x4(u[8 + e], u[12 + e], 0x44), y23 = _mm512_shuffle_i32x4(u[8 + e], u[12 + e], 0xee);
		a[e] = _mm512_shuffle_i32x4(x01, y01, 0x88);
		a[4 + e] = _mm512_shuffle_i32x4(x01, y01, 0xdd);
		a[8 + e] = _mm512_shuffle_i32x4(x23, y23, 0x88);
		a[12 + e] = _mm512_shuffle_i32x4(x23, y23, 0xdd);
	}
}

// kq_unpack16 decodes blocks [0, kn) of rows w, w + wrb, ... (nr of them, 1..16; the
// lanes past nr repeat row nr - 1 and are never stored) into u[0..kn).
static KQ_V16 void kq_unpack16(int t, const uint8_t *w, int64_t wrb, int nr, int64_t kn, kq_blk16 *u) {
	const int64_t bb = kq_wbytes(t);
	uint8_t tmp[16][KQ_QK] KQ_ALIGN(64);
	int32_t sct[16][16] KQ_ALIGN(64), mnt[16][16] KQ_ALIGN(64); // row r: its scales, its offset pairs
	for (int64_t b = 0; b < kn; b++, u++) {
		for (int r = 0; r < 16; r++) {
			const uint8_t *blk = w + (int64_t)(r < nr ? r : nr - 1) * wrb + b * bb;
			kq_dec256 o;
			kq_dec_meta(t, blk, &o);
			for (int h = 0; h < 2; h++) {
				__m512i q[2];
				kq_dec512_half(t, blk, h, q);
				_mm512_store_si512((void *)(tmp[r] + 128 * h), q[0]);
				_mm512_store_si512((void *)(tmp[r] + 128 * h + 64), q[1]);
			}
			_mm512_store_si512((void *)sct[r], _mm512_cvtepi16_epi32(o.sc));
			_mm512_store_si512((void *)mnt[r], _mm512_zextsi256_si512(o.mn)); // int16 pairs (mn[2p], mn[2p+1])
			u->d[r] = o.d;
			u->dmn[r] = o.dmn;
		}
		for (int c = 0; c < 4; c++) {
			__m512i a[16];
			for (int r = 0; r < 16; r++) a[r] = _mm512_load_si512((const void *)(tmp[r] + 64 * c));
			kq_tr16(a);
			for (int i = 0; i < 16; i++) _mm512_store_si512((void *)u->q[16 * c + i], a[i]);
		}
		__m512i a[16];
		for (int r = 0; r < 16; r++) a[r] = _mm512_load_si512((const void *)sct[r]);
		kq_tr16(a);
		for (int i = 0; i < 16; i++) _mm512_store_si512((void *)u->sc[i], a[i]);
		for (int r = 0; r < 16; r++) a[r] = _mm512_load_si512((const void *)mnt[r]);
		kq_tr16(a);
		for (int i = 0; i < 8; i++) _mm512_store_si512((void *)u->mn[i], a[i]);
	}
}

// kq_tile16 adds block u's dot with NJ activation rows' Q8_K block x (x + j*xrb) to
// facc[j] (lane r: weight row r), as the tiles' float steps. S32: the type's scales come
// in equal pairs (Q4_K, Q5_K), so 32 elements share one multiply.
KQ_V16_INLINE void kq_tile16(const int S32, const int MINS, const int NJ, const kq_blk16 *u, const uint8_t *x,
                             int64_t xrb, float (*facc)[16]) {
	__m512i I[8], M[8];
	for (int j = 0; j < NJ; j++) I[j] = M[j] = _mm512_setzero_si512();
	const int G = S32 ? 8 : 4; // 4-element groups a multiply
	for (int s = 0; s < 64 / G; s++) {
		__m512i S[8];
		for (int j = 0; j < NJ; j++) S[j] = _mm512_setzero_si512();
		for (int g = 0; g < G; g++) {
			const __m512i wv = _mm512_load_si512((const void *)u->q[G * s + g]);
			for (int j = 0; j < NJ; j++) {
				int32_t xb;
				memcpy(&xb, x + j * xrb + KQ_Q8K_QS + 4 * (G * s + g), 4);
				S[j] = _mm512_dpbusd_epi32(S[j], wv, _mm512_set1_epi32(xb));
			}
		}
		const __m512i sc = _mm512_load_si512((const void *)u->sc[S32 ? 2 * s : s]);
		for (int j = 0; j < NJ; j++) I[j] = _mm512_add_epi32(I[j], _mm512_mullo_epi32(S[j], sc));
	}
	for (int p = 0; p < 8; p++) {
		const __m512i mv = _mm512_load_si512((const void *)u->mn[p]);
		for (int j = 0; j < NJ; j++) {
			int32_t bs;
			memcpy(&bs, x + j * xrb + KQ_Q8K_BSUMS + 4 * p, 4);
			M[j] = _mm512_dpwssd_epi32(M[j], mv, _mm512_set1_epi32(bs));
		}
	}
	const __m512 dw = _mm512_load_ps(u->d), dm = _mm512_load_ps(u->dmn);
	for (int j = 0; j < NJ; j++) {
		const __m512 dx = _mm512_set1_ps(kq_rdf32(x + j * xrb));
		__m512 f = _mm512_load_ps(facc[j]);
		if (MINS) {
			f = _mm512_fmadd_ps(_mm512_cvtepi32_ps(I[j]), _mm512_mul_ps(dw, dx), f);
			f = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(M[j]), _mm512_mul_ps(dm, dx), f);
		} else {
			f = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(I[j], M[j])), _mm512_mul_ps(dw, dx), f);
		}
		_mm512_store_ps(facc[j], f);
	}
}

// KQ_V16_NJ: the activation rows a kq_tile16 takes (see above).
#define KQ_V16_NJ 8

// kq_tiles16 runs kq_tile16 over ni activation rows, KQ_V16_NJ at a time.
KQ_V16_INLINE void kq_tiles16(const int S32, const int MINS, const kq_blk16 *u, const uint8_t *x, int64_t xrb,
                              int64_t ni, float (*facc)[16]) {
	int64_t j = 0;
	for (; j + KQ_V16_NJ <= ni; j += KQ_V16_NJ) kq_tile16(S32, MINS, KQ_V16_NJ, u, x + j * xrb, xrb, facc + j);
	switch (ni - j) {
	case 7: kq_tile16(S32, MINS, 7, u, x + j * xrb, xrb, facc + j); break;
	case 6: kq_tile16(S32, MINS, 6, u, x + j * xrb, xrb, facc + j); break;
	case 5: kq_tile16(S32, MINS, 5, u, x + j * xrb, xrb, facc + j); break;
	case 4: kq_tile16(S32, MINS, 4, u, x + j * xrb, xrb, facc + j); break;
	case 3: kq_tile16(S32, MINS, 3, u, x + j * xrb, xrb, facc + j); break;
	case 2: kq_tile16(S32, MINS, 2, u, x + j * xrb, xrb, facc + j); break;
	case 1: kq_tile16(S32, MINS, 1, u, x + j * xrb, xrb, facc + j); break;
	}
}

#define KQ_TILES16_FN(S32, MINS)                                                                    \
	static KQ_V16 void kq_tiles16_##S32##MINS(const kq_blk16 *u, const uint8_t *x, int64_t xrb, int64_t ni, \
	                                          float (*facc)[16]) {                                \
		kq_tiles16(S32, MINS, u, x, xrb, ni, facc);                                           \
	}
KQ_TILES16_FN(0, 0)
KQ_TILES16_FN(0, 1)
KQ_TILES16_FN(1, 1)
#undef KQ_TILES16_FN

// kq_gemm16: kq_gemm's contract (kq_avx512_body.h) for nx activation rows.
static KQ_V16 void kq_gemm16(int t, const uint8_t *w, int64_t wrb, const uint8_t *xq, int64_t xrb, int64_t nx,
                             int64_t nb, int64_t r0, int64_t r1, float *dst, int64_t ldd) {
	enum { KB = 8, XC = 128 };
	void (*tiles)(const kq_blk16 *, const uint8_t *, int64_t, int64_t, float(*)[16]) =
		t == EMBER_Q4_K || t == EMBER_Q5_K ? kq_tiles16_11 : KQ_HAS_MINS(t) ? kq_tiles16_01 : kq_tiles16_00;
	const int64_t bb = kq_wbytes(t);
	kq_blk16 ub[KB];
	float facc[XC][16] KQ_ALIGN(64);
	for (int64_t i0 = 0; i0 < nx; i0 += XC) {
		const int64_t ni = nx - i0 < XC ? nx - i0 : XC;
		for (int64_t r = r0; r < r1; r += 16) {
			const int nr = r1 - r >= 16 ? 16 : (int)(r1 - r);
			for (int64_t k0 = 0; k0 < nb; k0 += KB) {
				const int64_t kn = nb - k0 < KB ? nb - k0 : KB;
				kq_unpack16(t, w + r * wrb + k0 * bb, wrb, nr, kn, ub);
				kq_prefetch_unpack(w, wrb, bb, nb, r, 16, r1, k0, KB);
				memset(facc, 0, sizeof(float) * 16 * ni);
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
