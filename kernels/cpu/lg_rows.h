// lg_rows.h: what the legacy-quant batch kernels with a weight row in each vector lane
// (lg_vnni16.h on AVX-512 VNNI, lg_rows8.h on AVX2) share: the chunking and the
// activation side of a chunk. Included by them, under their files' target (AVX2 here).

#ifndef LR_KB
#define LR_KB 32 // blocks a chunk of k (1,024 elements)
#endif
#ifndef LR_XC
#define LR_XC 128 // activation rows a chunk
#endif

// Per activation row and block of a chunk: the start value -offset * sum(x), the scale,
// and Q8_1's s.
typedef struct {
	int32_t c[LR_XC][LR_KB];
	float d[LR_XC][LR_KB], s[LR_XC][LR_KB];
} __attribute__((aligned(64))) lr_meta;

// lr_off: the offset the unsigned weight quants carry. VNNI makes Q8_0 unsigned by
// adding 128; the AVX2 kernel keeps it signed (vpsignb) and passes q8_signed.
LGA int lr_off(const int T, const int q8_signed) { return T == EMBER_Q8_0 ? (q8_signed ? 0 : 128) : lga_offset(T); }

// lr_fill_meta fills m for ni activation rows (x, x + xrb, ...) and kn blocks.
LGA void lr_fill_meta(const int T, const int q8_signed, const uint8_t *x, int64_t xrb, int ni, int kn, lr_meta *m) {
	const int is1 = lga_is1(T), off = lr_off(T, q8_signed), xbs = lga_xbytes(T), xqo = lga_xqs(T);
	for (int j = 0; j < ni; j++)
		for (int b = 0; b < kn; b++) {
			const uint8_t *xb = x + j * xrb + (int64_t)b * xbs;
			m->d[j][b] = lga_h2f(xb);
			if (is1) m->s[j][b] = lga_h2f(xb + 2);
			if (off) m->c[j][b] = -off * lga_qsum32(xb + xqo);
		}
}
