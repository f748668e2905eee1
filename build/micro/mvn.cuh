// mvn.cuh: where a batch-1 decode step's norm (the residual add, RMSNorm and Q8_K
// rounding of add_rms_norm_q8_k) can sit in mvp.cu's chain, each with its bits:
//   NORM=0  add_rms_norm_q8_k as the engine launches it (one block of 1,024 threads);
//   NORM=1  mvn256: one block of 256 threads (two barriers where the engine's takes
//           four, and registers that fit beside the product's blocks);
//   NORM=2  mvn256 that lets the next kernel launch before its own wait;
//   NORM=3  no norm at all (the bound; its outputs differ);
//   NORM=4  mv1_ln: the product before the norm runs it in its last block (an atomic
//           counter), one kernel boundary fewer.
// Session 33's skip study: the two norms of a layer cost ~3.9 us each in the engine's
// chain (8B Q4_K_M tg128 530 without against 468 with).
#pragma once

// mvn256: thread t holds elements 8 lane + i of blocks w and w + 8 (w = t / 32) for the
// rounding (q8k_quant_warp's layout); the sums of squares are add_rms_norm_row's (thread
// t's strided double sum over j = t, t + 256, ..., warp sums, the 8 in order).
template <bool EARLY>
__global__ void __launch_bounds__(256) mvn256(float* r, const float* a, const float* w, float* dst, uint8_t* x, int cols,
                                              float eps) {
    __shared__ float xs[4096];
    __shared__ double part[8];
    const int t = threadIdx.x, lane = t & 31, wp = t >> 5, nb = cols / 256;
    float wv[2][8];
#pragma unroll
    for (int u = 0; u < 2; u++)
#pragma unroll
        for (int i = 0; i < 8; i++) wv[u][i] = wp + 8 * u < nb ? w[(wp + 8 * u) * 256 + 8 * lane + i] : 0.0f;
    if (EARLY) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    asm volatile("griddepcontrol.wait;" ::: "memory");
    if (!EARLY) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    float4 av[2][2], rv[2][2];
#pragma unroll
    for (int u = 0; u < 2; u++)
        if (wp + 8 * u < nb)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int j = (wp + 8 * u) * 256 + 8 * lane + 4 * h;
                av[u][h] = *(const float4*)(a + j), rv[u][h] = *(const float4*)(r + j);
            }
#pragma unroll
    for (int u = 0; u < 2; u++)
        if (wp + 8 * u < nb)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int j = (wp + 8 * u) * 256 + 8 * lane + 4 * h;
                const float4 s = make_float4(av[u][h].x + rv[u][h].x, av[u][h].y + rv[u][h].y, av[u][h].z + rv[u][h].z,
                                             av[u][h].w + rv[u][h].w);
                *(float4*)(xs + j) = s;
                *(float4*)(r + j) = s;
            }
    __syncthreads();
    double ss0 = 0;
    for (int j = t; j < cols; j += 256) ss0 += (double)xs[j] * (double)xs[j];
    ss0 = warp_sumd(ss0);
    if (lane == 0) part[wp] = ss0;
    __syncthreads();
    double ss = 0;
    for (int k = 0; k < 8; k++) ss += part[k];
    const float mean = (float)(ss / (double)cols);
    const float scale = (float)(1.0 / sqrt((double)(mean + eps)));
#pragma unroll
    for (int u = 0; u < 2; u++) {
        const int ib = wp + 8 * u;
        if (ib >= nb) break;
        float v[8];
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const int j = ib * 256 + 8 * lane + i;
            v[i] = xs[j] * scale * wv[u][i];
            dst[j] = v[i];
        }
        q8k_quant_warp(v, x, ib, cols);
    }
}

// mv1_ln: mmv_q4_k_1 / mmv_q6_k_1, then the norm of its output by the last block to
// finish (mvp_norm's bits; cnt zero between launches, the last block zeroes it).
template <int T>
__global__ void __launch_bounds__(128) mv1_ln(const uint8_t* W, i64 ws, const uint8_t* X, float* D, int M, int K, NormArgs na,
                                             unsigned* cnt) {
    __shared__ int last;
    mv1<T, true>(W, ws, X, D, M, K, blockIdx.x);
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(cnt, 1) == gridDim.x - 1;
    __syncthreads();
    if (last) {
        __threadfence();
        mvp_norm(D, na);
        if (threadIdx.x == 0) *cnt = 0;
    }
}
