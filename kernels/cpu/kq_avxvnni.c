// kq_avxvnni.c: the K-quant gemm of batches on AVX2 CPUs with AVX-VNNI (VEX-encoded
// vpdpbusd on 256-bit vectors: Intel Alder Lake and later, AMD Zen 5): kq_rows8.h
// compiled a second time with KQ_R8_VNNI, eight weight rows a vector, with the same
// bits as the AVX2 form. Fewer activation rows (decode reads memory, where VNNI buys
// nothing) and the types it does not speed up keep kq_avx2.c's kernels. Reached through EMBER_ISA_AVX2VNNI, which only
// ember_gemm_kq takes (Kernels.VNNI256 on the AVX2 path).
#include "kq.h"

#if defined(__x86_64__)
#include <string.h>
#include "kq_x86.h"

#define KQ_R8 __attribute__((target("avx2,fma,f16c,avxvnni")))
#define KQ_R8_INLINE static inline __attribute__((always_inline, target("avx2,fma,f16c,avxvnni")))
#define KQ_R8_VNNI 1
#include "kq_rows8.h"

// Batches of more than this many activation rows take the rows (kq_avx2.c's crossover).
#define KQ_VNNI_GEMVN_MAX 8

// kq_vnni_gains: the types whose rows gain from VNNI. BenchmarkGemmKQ (512 x 1024 x 4096,
// one thread, medians of five, session 82) on the GPU machine's Sapphire Rapids Xeon, AVX2
// -> AVX-VNNI: Q4_K 175.6 -> 189.9 GOPS and Q5_K 165.8 -> 188.9 (two vpdpbusd chains a
// row: kq_rows8.h; Q5_K was 179.3 with one), Q6_K 158.4 -> 172.6 and Q3_K about even
// (172.5 -> 173.4; session 81: 175.3 -> 177.9); Q2_K does not (172.6 on AVX2 against
// 165.8 with two chains and about even with one), so it keeps the AVX2 form.
static int kq_vnni_gains(int t) { return t != EMBER_Q2_K; }

KQ_R8 void ember_kq_gemm_avxvnni(int t, const uint8_t *w, int64_t wrb, const uint8_t *xq, int64_t xrb,
                                 int64_t nx, int64_t nb, int64_t r0, int64_t r1, float *dst, int64_t ldd) {
	if (nx > KQ_VNNI_GEMVN_MAX && kq_vnni_gains(t))
		kq_gemm8(t, w, wrb, xq, xrb, nx, nb, r0, r1, dst, ldd);
	else
		ember_kq_gemm_avx2(t, w, wrb, xq, xrb, nx, nb, r0, r1, dst, ldd);
}
#endif
