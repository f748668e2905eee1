// lg_rows8.h: the legacy-quant gemm of batches (prompts) on AVX2, eight weight rows a
// vector: the AVX2 form of lg_vnni16.h (which explains the layout). Included once by
// lg_avx2_tile.c.
//
// Lane r of a vector is weight row r of a group of eight. One vpmaddubsw takes four
// elements of all eight rows against four activation bytes broadcast from the row as it
// lies, giving two int16 pair sums a row:
//  - the 4- and 5-bit types add four 4-element groups in int16 (4 x 2 x 31 x 128 <
//    32768; Q4's eight would fit too, and measured no faster), then one vpmaddwd by ones;
//  - Q8_0 stays signed, as in the tiles: |w| times x with w's sign (vpsignb), a group at a
//    time (2 x 127 x 128 < 32768).
// The offset of Q4_0 / Q5_0 is the block's int32 start value (lg_rows.h). Each output is
// the sum over its blocks in order, as lg_vnni16.h's.
//
// With LR8_VNNI (lg_avxvnni.c: AVX2 CPUs with AVX-VNNI) one VEX vpdpbusd a group takes the
// place of vpmaddubsw, the int16 adds and vpmaddwd, and Q8_0 is made unsigned as in
// lg_vnni16.h (plus 128, taken back by the start value -128 * sum(x)): the same exact
// block sums, so the same bits.

#ifndef LR8_VNNI
#define LR8_VNNI 0
#endif

#include "lg_rows.h"

#define LR8_NJ 4 // activation rows a tile (16 registers: sums, runs, floats)

// One block of eight weight rows: q[e] lane r holds elements 4e..4e+3 of row r.
typedef struct {
	uint8_t q[8][32];
	float d[8], m[8];
} __attribute__((aligned(64))) lr8_blk;

// lr8_unpack decodes blocks [0, kn) of rows w, w + wrb, ... (nr of them, 1..8; lanes
// past nr repeat row nr - 1 and are never stored) into u[0..kn).
LGA void lr8_unpack(const int T, const uint8_t *w, int64_t wrb, int nr, int kn, lr8_blk *u) {
	const int bs = lg_type_bytes(T);
	for (int b = 0; b < kn; b++) {
		__m256i v[8];
		for (int r = 0; r < 8; r++) {
			const uint8_t *blk = w + (int64_t)(r < nr ? r : nr - 1) * wrb + (int64_t)b * bs;
			v[r] = lga_wquants(T, blk);
#if LR8_VNNI
			if (T == EMBER_Q8_0) v[r] = _mm256_xor_si256(v[r], _mm256_set1_epi8((char)0x80));
#endif
			u[b].d[r] = lga_h2f(blk);
			if (lga_is1(T)) u[b].m[r] = lga_h2f(blk + 2);
		}
		lga_store_group((int8_t *)&u[b].q[0][0], v);
	}
}

// lr8_tile: NJ activation rows (x: row j0's block 0 of the chunk) against the unpacked
// blocks u[0..kn) of one row group; the sums go to dst (row j0, the group's first
// column), nr columns, stored when first, else added.
LGA void lr8_tile(const int T, const int NJ, const lr8_blk *u, int kn, const uint8_t *x, int64_t xrb,
                  const lr_meta *m, int j0, float *dst, int64_t ldd, int nr, int first) {
	const int is1 = lga_is1(T), off = lr_off(T, !LR8_VNNI), xbs = lga_xbytes(T), xqo = lga_xqs(T);
	const int run = 4; // groups added in int16 (Q4: 8 would fit, and measured no faster)
	const __m256i ones = _mm256_set1_epi16(1);
	__m256 f[LR8_NJ];
	for (int j = 0; j < NJ; j++) f[j] = _mm256_setzero_ps();
	for (int b = 0; b < kn; b++) {
		__m256i s[LR8_NJ];
		for (int j = 0; j < NJ; j++) s[j] = off ? _mm256_set1_epi32(m->c[j0 + j][b]) : _mm256_setzero_si256();
		const uint8_t *xb = x + (int64_t)b * xbs + xqo;
#if LR8_VNNI // (a compiler may reject the intrinsic outside lg_avxvnni.c's target, even unreached)
		// two chains a row (even and odd groups), for vpdpbusd's latency
		__m256i t[LR8_NJ];
		for (int j = 0; j < NJ; j++) t[j] = _mm256_setzero_si256();
		for (int e = 0; e < 8; e += 2) {
			const __m256i wv = _mm256_load_si256((const __m256i *)u[b].q[e]),
			              wu = _mm256_load_si256((const __m256i *)u[b].q[e + 1]);
			for (int j = 0; j < NJ; j++) {
				s[j] = _mm256_dpbusd_avx_epi32(s[j], wv, _mm256_set1_epi32((int)lg_rd32(xb + j * xrb + 4 * e)));
				t[j] = _mm256_dpbusd_avx_epi32(t[j], wu, _mm256_set1_epi32((int)lg_rd32(xb + j * xrb + 4 * e + 4)));
			}
		}
		for (int j = 0; j < NJ; j++) s[j] = _mm256_add_epi32(s[j], t[j]);
		(void)ones, (void)run;
#else
		if (T == EMBER_Q8_0) {
			for (int e = 0; e < 8; e++) {
				const __m256i wv = _mm256_load_si256((const __m256i *)u[b].q[e]), aw = _mm256_abs_epi8(wv);
				for (int j = 0; j < NJ; j++) {
					const __m256i xv = _mm256_sign_epi8(_mm256_set1_epi32((int)lg_rd32(xb + j * xrb + 4 * e)), wv);
					s[j] = _mm256_add_epi32(s[j], _mm256_madd_epi16(_mm256_maddubs_epi16(aw, xv), ones));
				}
			}
		} else {
			for (int e0 = 0; e0 < 8; e0 += run) {
				__m256i a[LR8_NJ];
				for (int e = e0; e < e0 + run; e++) {
					const __m256i wv = _mm256_load_si256((const __m256i *)u[b].q[e]);
					for (int j = 0; j < NJ; j++) {
						const __m256i p = _mm256_maddubs_epi16(wv, _mm256_set1_epi32((int)lg_rd32(xb + j * xrb + 4 * e)));
						a[j] = e == e0 ? p : _mm256_add_epi16(a[j], p);
						LG_OPAQUE(a[j]); // group by group: hoisted loads would spill
					}
				}
				for (int j = 0; j < NJ; j++) s[j] = _mm256_add_epi32(s[j], _mm256_madd_epi16(a[j], ones));
			}
		}
#endif
		const __m256 dw = _mm256_load_ps(u[b].d);
		for (int j = 0; j < NJ; j++) {
			f[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s[j]), _mm256_mul_ps(dw, _mm256_set1_ps(m->d[j0 + j][b])), f[j]);
			if (is1) f[j] = _mm256_fmadd_ps(_mm256_load_ps(u[b].m), _mm256_set1_ps(m->s[j0 + j][b]), f[j]);
		}
	}
	for (int j = 0; j < NJ; j++) {
		float *p = dst + j * ldd;
		if (nr == 8) {
			_mm256_storeu_ps(p, first ? f[j] : _mm256_add_ps(_mm256_loadu_ps(p), f[j]));
		} else {
			float t[8];
			_mm256_storeu_ps(t, f[j]);
			for (int i = 0; i < nr; i++) p[i] = first ? t[i] : p[i] + t[i];
		}
	}
}

// lr8_tiles runs lr8_tile over ni activation rows, LR8_NJ at a time.
LGA void lr8_tiles(const int T, const lr8_blk *u, int kn, const uint8_t *x, int64_t xrb, int ni, const lr_meta *m,
                   float *dst, int64_t ldd, int nr, int first) {
	int j = 0;
	for (; j + LR8_NJ <= ni; j += LR8_NJ)
		lr8_tile(T, LR8_NJ, u, kn, x + j * xrb, xrb, m, j, dst + j * ldd, ldd, nr, first);
	x += j * xrb, dst += j * ldd;
	switch (ni - j) {
	case 3: lr8_tile(T, 3, u, kn, x, xrb, m, j, dst, ldd, nr, first); break;
	case 2: lr8_tile(T, 2, u, kn, x, xrb, m, j, dst, ldd, nr, first); break;
	case 1: lr8_tile(T, 1, u, kn, x, xrb, m, j, dst, ldd, nr, first); break;
	}
}

// lr8_gemm: lg_gemm's contract for one quantized weight type T (nbk blocks a row).
// Stack: 10 KB of unpacked blocks and 48 KB of activation data.
LGA void lr8_gemm(const int T, const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb, int64_t nx, int64_t nbk,
                  int64_t r0, int64_t r1, float *dst, int64_t ldd) {
	const int bs = lg_type_bytes(T), xbs = lga_xbytes(T);
	lr8_blk ub[LR_KB];
	lr_meta m;
	for (int64_t i0 = 0; i0 < nx; i0 += LR_XC) {
		const int ni = (int)(nx - i0 < LR_XC ? nx - i0 : LR_XC);
		for (int64_t k0 = 0; k0 < nbk; k0 += LR_KB) {
			const int kn = (int)(nbk - k0 < LR_KB ? nbk - k0 : LR_KB);
			const uint8_t *xc = x + i0 * xrb + k0 * xbs;
			lr_fill_meta(T, !LR8_VNNI, xc, xrb, ni, kn, &m);
			for (int64_t r = r0; r < r1; r += 8) {
				const int nr = r1 - r >= 8 ? 8 : (int)(r1 - r);
				lr8_unpack(T, w + r * wrb + k0 * bs, wrb, nr, kn, ub);
				lr8_tiles(T, ub, kn, xc, xrb, ni, &m, dst + i0 * ldd + r, ldd, nr, k0 == 0);
			}
		}
	}
}

