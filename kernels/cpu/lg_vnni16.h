// lg_vnni16.h: the legacy-quant gemm of batches (prompts) on AVX-512 VNNI, sixteen
// weight rows a vector. Included once by lg_avx512.c, after l5_store_group.
//
// The tiles (l5_tiled_q) give each vector lane a block of k, so the activations must be
// interleaved like the weights: every tile of 24 weight rows packed its activation rows
// again (two 8x8 transposes and the offset sums a group), about a third of the work at
// 512 x 1024 x 4096. Here lane r of a vector is weight row r of a group of sixteen, as in
// kq_vnni16.h: a block's quants are interleaved four bytes at a time when the block is
// unpacked (l5_store_group, rows for blocks), and one vpdpbusd takes four elements of all
// sixteen rows against four activation bytes broadcast from the Q8_0 / Q8_1 row as it
// lies, so nothing on the activation side is packed. The weights are made unsigned as in
// the tiles (Q8_0 plus 128, Q4_0 / Q5_0 their raw quants), and the offset comes back
// through the block's int32 start value -offset * sum(x), computed once per chunk of
// activation rows and blocks (lg_rows.h) for all row groups.
//
// Each output is the sum over its blocks, in order, of (dw * dx) * isum (+ mw * sx for
// Q4_1 / Q5_1), each chunk of LR_KB blocks from zero and then added to dst: not the
// tiles' order (they sum lanes of sixteen blocks and reduce), so the results differ from
// theirs in the last bits, within the kernels' tolerance of the scalar reference.

#include "lg_rows.h"

#define L16_NJ 8 // activation rows a tile: eight independent vpdpbusd chains

// One block of sixteen weight rows: q[e] lane r holds elements 4e..4e+3 of row r.
typedef struct {
	uint8_t q[8][64];
	float d[16], m[16];
} __attribute__((aligned(64))) l16_blk;

// l16_unpack decodes blocks [0, kn) of rows w, w + wrb, ... (nr of them, 1..16; lanes
// past nr repeat row nr - 1 and are never stored) into u[0..kn).
LGA void l16_unpack(const int T, const uint8_t *w, int64_t wrb, int nr, int kn, l16_blk *u) {
	const int bs = lg_type_bytes(T);
	const __m256i flip = _mm256_set1_epi8((char)0x80);
	for (int b = 0; b < kn; b++) {
		__m256i v[16];
		for (int r = 0; r < 16; r++) {
			const uint8_t *blk = w + (int64_t)(r < nr ? r : nr - 1) * wrb + (int64_t)b * bs;
			v[r] = lga_wquants(T, blk);
			if (T == EMBER_Q8_0) v[r] = _mm256_xor_si256(v[r], flip);
			u[b].d[r] = lga_h2f(blk);
			if (lga_is1(T)) u[b].m[r] = lga_h2f(blk + 2);
		}
		l5_store_group(&u[b].q[0][0], v);
	}
}

// l16_tile: NJ activation rows (x: row j0's block 0 of the chunk) against the unpacked
// blocks u[0..kn) of one row group; the sums go to dst (row j0, the group's first
// column) under msk, stored when first, else added.
LGA void l16_tile(const int T, const int NJ, const l16_blk *u, int kn, const uint8_t *x, int64_t xrb,
                  const lr_meta *m, int j0, float *dst, int64_t ldd, __mmask16 msk, int first) {
	const int is1 = lga_is1(T), off = lr_off(T, 0), xbs = lga_xbytes(T), xqo = lga_xqs(T);
	__m512 f[L16_NJ];
	for (int j = 0; j < NJ; j++) f[j] = _mm512_setzero_ps();
	for (int b = 0; b < kn; b++) {
		__m512i s[L16_NJ];
		for (int j = 0; j < NJ; j++) s[j] = off ? _mm512_set1_epi32(m->c[j0 + j][b]) : _mm512_setzero_si512();
		const uint8_t *xb = x + (int64_t)b * xbs + xqo;
		for (int e = 0; e < 8; e++) {
			const __m512i wv = _mm512_load_si512((const void *)u[b].q[e]);
			for (int j = 0; j < NJ; j++)
				s[j] = _mm512_dpbusd_epi32(s[j], wv, _mm512_set1_epi32((int)lg_rd32(xb + j * xrb + 4 * e)));
		}
		const __m512 dw = _mm512_load_ps(u[b].d);
		for (int j = 0; j < NJ; j++) {
			f[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s[j]), _mm512_mul_ps(dw, _mm512_set1_ps(m->d[j0 + j][b])), f[j]);
			if (is1) f[j] = _mm512_fmadd_ps(_mm512_load_ps(u[b].m), _mm512_set1_ps(m->s[j0 + j][b]), f[j]);
		}
	}
	for (int j = 0; j < NJ; j++) {
		float *p = dst + j * ldd;
		const __m512 v = first ? f[j] : _mm512_add_ps(_mm512_maskz_loadu_ps(msk, p), f[j]);
		_mm512_mask_storeu_ps(p, msk, v);
	}
}

// l16_tiles runs l16_tile over ni activation rows, L16_NJ at a time.
LGA void l16_tiles(const int T, const l16_blk *u, int kn, const uint8_t *x, int64_t xrb, int ni, const lr_meta *m,
                   float *dst, int64_t ldd, __mmask16 msk, int first) {
	int j = 0;
	for (; j + L16_NJ <= ni; j += L16_NJ)
		l16_tile(T, L16_NJ, u, kn, x + j * xrb, xrb, m, j, dst + j * ldd, ldd, msk, first);
	x += j * xrb, dst += j * ldd;
	switch (ni - j) {
	case 7: l16_tile(T, 7, u, kn, x, xrb, m, j, dst, ldd, msk, first); break;
	case 6: l16_tile(T, 6, u, kn, x, xrb, m, j, dst, ldd, msk, first); break;
	case 5: l16_tile(T, 5, u, kn, x, xrb, m, j, dst, ldd, msk, first); break;
	case 4: l16_tile(T, 4, u, kn, x, xrb, m, j, dst, ldd, msk, first); break;
	case 3: l16_tile(T, 3, u, kn, x, xrb, m, j, dst, ldd, msk, first); break;
	case 2: l16_tile(T, 2, u, kn, x, xrb, m, j, dst, ldd, msk, first); break;
	case 1: l16_tile(T, 1, u, kn, x, xrb, m, j, dst, ldd, msk, first); break;
	}
}

// l16_gemm: lg_gemm's contract for one quantized weight type T (nbk blocks a row).
// Stack: 20 KB of unpacked blocks and 48 KB of activation data.
LGA void l16_gemm(const int T, const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb, int64_t nx,
                  int64_t nbk, int64_t r0, int64_t r1, float *dst, int64_t ldd) {
	const int bs = lg_type_bytes(T), xbs = lga_xbytes(T);
	l16_blk ub[LR_KB];
	lr_meta m;
	for (int64_t i0 = 0; i0 < nx; i0 += LR_XC) {
		const int ni = (int)(nx - i0 < LR_XC ? nx - i0 : LR_XC);
		for (int64_t k0 = 0; k0 < nbk; k0 += LR_KB) {
			const int kn = (int)(nbk - k0 < LR_KB ? nbk - k0 : LR_KB);
			const uint8_t *xc = x + i0 * xrb + k0 * xbs;
			lr_fill_meta(T, 0, xc, xrb, ni, kn, &m);
			for (int64_t r = r0; r < r1; r += 16) {
				const int nr = r1 - r >= 16 ? 16 : (int)(r1 - r);
				l16_unpack(T, w + r * wrb + k0 * bs, wrb, nr, kn, ub);
				l16_tiles(T, ub, kn, xc, xrb, ni, &m, dst + i0 * ldd + r, ldd, (__mmask16)((1u << nr) - 1), k0 == 0);
			}
		}
	}
}

// l16_gemm_any: l16_gemm for one of the five types, each case its own inlined copy.
static void l16_gemm_any(int T, const uint8_t *w, int64_t wrb, const uint8_t *x, int64_t xrb, int64_t nx, int64_t nbk,
                         int64_t r0, int64_t r1, float *dst, int64_t ldd) {
	switch (T) {
	case EMBER_Q4_0: l16_gemm(EMBER_Q4_0, w, wrb, x, xrb, nx, nbk, r0, r1, dst, ldd); break;
	case EMBER_Q4_1: l16_gemm(EMBER_Q4_1, w, wrb, x, xrb, nx, nbk, r0, r1, dst, ldd); break;
	case EMBER_Q5_0: l16_gemm(EMBER_Q5_0, w, wrb, x, xrb, nx, nbk, r0, r1, dst, ldd); break;
	case EMBER_Q5_1: l16_gemm(EMBER_Q5_1, w, wrb, x, xrb, nx, nbk, r0, r1, dst, ldd); break;
	default: l16_gemm(EMBER_Q8_0, w, wrb, x, xrb, nx, nbk, r0, r1, dst, ldd); break;
	}
}
