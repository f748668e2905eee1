// q4k.cuh: what the Q4_K product micros (mmgb.cu, mmh.cu) share, included after
// kernels/cuda/mmg.cu (its common.cuh helpers): random Q4_K weights, their f16
// dequantization as the engine's f16 copies hold it (cuBLAS's reference), and a stream
// with a cuBLAS handle on it.
#pragma once
#include <cublas_v2.h>
#include <cstring>
#include <random>
#include <vector>

// dq16: Q4_K row-major weights (144 bytes a block) to f16, quant's formula rounded once.
__global__ void dq16(const uint8_t* W, int M, int K, __half* out) {
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)M * K) return;
    const int r = (int)(i / K), k = (int)(i % K);
    const uint8_t* b = W + ((size_t)r * (K / 256) + k / 256) * 144;
    int sc, m;
    scale_min_k4((k % 256) / 32, b + 4, &sc, &m);
    const float d1 = ldh(b) * (float)sc, m1 = ldh(b + 2) * (float)m;
    out[i] = __float2half_rn(d1 * (float)q4k_at(b + 16, k % 256) - m1);
}

// random_q4k: M rows of nb Q4_K blocks of random bytes, with small positive d and dmin.
static std::vector<uint8_t> random_q4k(int M, int nb, std::mt19937& rng) {
    std::vector<uint8_t> hw((size_t)M * nb * 144);
    std::uniform_int_distribution<int> byte(0, 255);
    for (auto& v : hw) v = (uint8_t)byte(rng);
    for (size_t b = 0; b < (size_t)M * nb; b++) {
        const __half d = __float2half(0.0005f + 0.0005f * (b % 7)), dm = __float2half(0.001f * (b % 5));
        memcpy(&hw[b * 144], &d, 2);
        memcpy(&hw[b * 144 + 2], &dm, 2);
    }
    return hw;
}

// cublas_on makes a stream and a cuBLAS handle working on it (exits on failure).
static cublasHandle_t cublas_on(cudaStream_t* s) {
    CK(cudaStreamCreate(s));
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) exit(1);
    cublasSetStream(h, *s);
    return h;
}
