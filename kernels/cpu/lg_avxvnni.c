// lg_avxvnni.c: the legacy-quant gemm of batches on AVX2 CPUs with AVX-VNNI (VEX-encoded
// vpdpbusd on 256-bit vectors: Intel Alder Lake and later, AMD Zen 5): lg_rows8.h compiled
// a second time with LR8_VNNI, eight weight rows a vector, with the same bits as the AVX2
// form; and Q8_0's decode and small batches, lg_direct.h with LG_DIRECT_VNNI (the AVX2
// form's bits too). The other types' small batches (streaming, memory-bound) and the
// float types keep lg_avx2.c's kernels. Reached through EMBER_ISA_AVX2VNNI, which only
// ember_gemm_lg takes (Kernels.VNNI256).
#include "lg.h"

#if defined(__x86_64__)
#include <immintrin.h> // before the target pragma: its functions carry their own targets
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c,avxvnni"))), apply_to = function)
#else
#pragma GCC target("avx2,fma,f16c,avxvnni")
#endif
#include "lg_x86.h"

#define LR8_VNNI 1
#include "lg_rows8.h"
#define LG_DIRECT_VNNI 1
#include "lg_direct.h"

LGA_DIRECT_FN(lga_direct_q8_0_vnni, lga_direct_q, EMBER_Q8_0, kk / LG_QK)

// Batches of at least this many activation rows take the rows (lg_avx2.c's crossover).
#define LG_VNNI_TILED_NX 8

int lg_gemm_avxvnni(int wtype, const uint8_t *w, int64_t wrb, const uint8_t *xq, int64_t xrb, int64_t nx,
                    int64_t k, int64_t r0, int64_t r1, float *dst, int64_t ldd) {
	// Decode and small batches: Q8_0 alone. BenchmarkLGGemmSmallBatch on the GPU machine's
	// Sapphire Rapids (Golden Cove cores), one pinned thread, 4096 x 4096 from memory,
	// GB/s, medians of three, AVX2 form -> this (session 82): nx=2 13.1 -> 15.1, nx=3 9.0
	// -> 11.0, nx=4 6.4 -> 7.3; nx=1 (decode) even at 18.6 (memory-bound).
	if (nx < LG_VNNI_TILED_NX && wtype == EMBER_Q8_0) {
		lga_direct_q8_0_vnni(w, wrb, xq, xrb, nx, k, r0, r1, dst, ldd);
		return 0;
	}
	if (nx >= LG_VNNI_TILED_NX) {
		const int64_t nb = k / LG_QK;
		switch (wtype) {
		case EMBER_Q4_0: lr8_gemm(EMBER_Q4_0, w, wrb, xq, xrb, nx, nb, r0, r1, dst, ldd); return 0;
		case EMBER_Q4_1: lr8_gemm(EMBER_Q4_1, w, wrb, xq, xrb, nx, nb, r0, r1, dst, ldd); return 0;
		case EMBER_Q5_0: lr8_gemm(EMBER_Q5_0, w, wrb, xq, xrb, nx, nb, r0, r1, dst, ldd); return 0;
		case EMBER_Q5_1: lr8_gemm(EMBER_Q5_1, w, wrb, xq, xrb, nx, nb, r0, r1, dst, ldd); return 0;
		case EMBER_Q8_0: lr8_gemm(EMBER_Q8_0, w, wrb, xq, xrb, nx, nb, r0, r1, dst, ldd); return 0;
		}
	}
	return lg_gemm_avx2(wtype, w, wrb, xq, xrb, nx, k, r0, r1, dst, ldd);
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
