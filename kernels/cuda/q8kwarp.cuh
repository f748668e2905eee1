// q8kwarp.cuh: the warp-wide Q8_K rounding that quant.cu's fused kernels and matmul.cu's
// router product share.
#pragma once
#include "common.cuh"

// q8k_quant_warp rounds one 256-element block ib of a row to Q8_K as q8k_quant_in does,
// by one warp alone, lane l holding elements 8l .. 8l+7 (v): the largest magnitude (the
// first on ties, NaN never) found by shuffles with no shared memory and no barrier, the
// quants written 8 bytes a lane and each 16 elements' sum from a pair of lanes. At 64
// rows of 14,336 (a batch's SwiGLU) a block a 256-element block with two barriers took
// ~12 us on the H200.
__device__ __forceinline__ void q8k_quant_warp(const float v[8], uint8_t* row, int ib, int k) {
    const int lane = threadIdx.x & 31;
    float a = -2.0f, x = 0.0f;
    int idx = 0;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        float m = fabsf(v[i]);
        if (m != m) m = -1.0f;
        if (m > a) { a = m; idx = 8 * lane + i; x = v[i]; }
    }
    for (int o = 16; o > 0; o >>= 1) {
        const float a2 = __shfl_xor_sync(0xffffffffu, a, o), x2 = __shfl_xor_sync(0xffffffffu, x, o);
        const int i2 = __shfl_xor_sync(0xffffffffu, idx, o);
        if (q8k_first(a2, i2, a, idx)) { a = a2; idx = i2; x = x2; }
    }
    const float iscale = q8k_iscale(a, x), d = q8k_d(a, iscale);
    uint32_t p[2] = {0, 0};
    int s = 0;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const int q = q8k_q(a, iscale, v[i]);
        s += q;
        p[i / 4] |= (uint32_t)(q & 255) << (8 * (i % 4));
    }
    *(uint2*)(row + ib * 256 + 8 * lane) = make_uint2(p[0], p[1]);
    s += __shfl_xor_sync(0xffffffffu, s, 1);
    if ((lane & 1) == 0) ((int*)(row + Q8K_BSUMS(k)))[ib * 16 + lane / 2] = s;
    if (lane == 0) ((float*)(row + k))[ib] = d;
}
