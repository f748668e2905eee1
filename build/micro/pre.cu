// pre.cu: does a kernel's work before its griddepcontrol.wait slow a chain of PDL launches
// when that work is asynchronous copies (cp.async) rather than loads into registers?
// Session 24 found attention_dec's first key and value tiles copied by cp.async before its
// wait (rows older steps wrote) made 8B tg128 ~10 us a layer slower on the H200, where the
// same kernel with only its block-table reads before the wait was level with waiting
// first (NOTES.md, session 24), and mvs (cp.async.bulk tiles before the wait) and mmf
// (cp.async before the wait) were slower than expected. This asks it in isolation.
//
// A step is 32 layers of Llama-3.1-8B Q4_K_M product bytes (as mk.cu), in one graph with
// programmatic edges: per layer Q/K/V (15.2 MB), then a small kernel of 8 blocks x 256
// threads (decode attention's shape at one row), then O (9.4), gate/up (66) and down (48).
// The small kernel copies a 32 KiB tile of a buffer no kernel writes into shared memory,
// with `smem` KiB of dynamic shared memory in all (attention_dec takes ~100), and mode:
//   0 the copies (cp.async) after the wait;
//   1 the tile loaded into registers before the wait, stored to shared memory after it;
//   2 the copies (cp.async) issued before the wait, waited for after it (session 24's);
//   3 no tile at all (the chain's floor).
// nvcc -arch=sm_90 -std=c++17 -O3 -o pre pre.cu && ./pre
#include "micro.cuh"

#define TILE16 2048  // 16-byte words of a block's tile: 32 KiB

__device__ __forceinline__ void cp16(void* dst, const void* src) {
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(src) : "memory");
}

__global__ void __launch_bounds__(256) ksmall(const uint4* tiles, unsigned* out, int mode) {
    extern __shared__ __align__(16) uint4 sm[];
    const uint4* src = tiles + (size_t)blockIdx.x * TILE16;
    const int t = threadIdx.x;
    constexpr int U = TILE16 / 256;
    uint4 r[U];
    if (mode == 1) {
#pragma unroll
        for (int u = 0; u < U; u++) r[u] = __ldcg(src + t + 256 * u);
    }
    if (mode == 2) {
#pragma unroll
        for (int u = 0; u < U; u++) cp16(sm + t + 256 * u, src + t + 256 * u);
        asm volatile("cp.async.commit_group;" ::: "memory");
    }
    pdl();
    if (mode == 0) {
#pragma unroll
        for (int u = 0; u < U; u++) cp16(sm + t + 256 * u, src + t + 256 * u);
        asm volatile("cp.async.commit_group;" ::: "memory");
    }
    if (mode == 0 || mode == 2) asm volatile("cp.async.wait_all;" ::: "memory");
    if (mode == 1) {
#pragma unroll
        for (int u = 0; u < U; u++) sm[t + 256 * u] = r[u];
    }
    __syncthreads();
    unsigned acc = 0;
    if (mode != 3) {
#pragma unroll
        for (int u = 0; u < U; u++) {
            const uint4 v = sm[(t * 7 + 256 * u) % TILE16];
            acc ^= v.x + v.y * 3 + v.z * 5 + v.w * 7;
        }
    }
    if (acc == 0x12345678) out[blockIdx.x * 256 + t] = acc;
}

int main() {
    cudaDeviceProp pr;
    CK(cudaGetDeviceProperties(&pr, 0));
    const int sms = pr.multiProcessorCount, layers = 32;
    const double mb[4] = {15.2, 9.4, 66, 48};
    size_t sz[4], total = 0;
    for (int k = 0; k < 4; k++) sz[k] = ((size_t)(mb[k] * 1e6) + 4095) & ~(size_t)4095, total += sz[k];
    uint8_t* pool;
    CK(cudaMalloc(&pool, total * layers));
    CK(cudaMemset(pool, 1, total * layers));
    uint4* tiles;  // each layer's 8 tiles apart
    const size_t tbytes = (size_t)layers * 8 * TILE16 * 16;
    CK(cudaMalloc(&tiles, tbytes));
    CK(cudaMemset(tiles, 2, tbytes));
    unsigned* out;
    CK(cudaMalloc(&out, 1 << 24));
    CK(cudaFuncSetAttribute(ksmall, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 << 10));
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    const double gb = (double)total * layers / 1e9;
    printf("%s: %d SMs, %.2f GB a step\n", pr.name, sms, gb);
    const int smems[2] = {32, 100};
    // carve: both kernels' preferred shared memory carveout (per cent; -1 the driver's
    // choice, which may differ between them and make SMs drain at each switch).
    const int carves[3] = {-1, 100, 50};
    for (int ci = 0; ci < 3; ci++)
    for (int si = 0; si < 2; si++) {
        CK(cudaFuncSetAttribute(kstream, cudaFuncAttributePreferredSharedMemoryCarveout, carves[ci]));
        CK(cudaFuncSetAttribute(ksmall, cudaFuncAttributePreferredSharedMemoryCarveout, carves[ci]));
        for (int mode = 0; mode < 4; mode++) {
            const int smem = smems[si] << 10;
            const float best = graph_best_ms(s, [&] {
                size_t off = 0;
                for (int l = 0; l < layers; l++) {
                    for (int k = 0; k < 4; k++) {
                        launch(s, kstream, sms * 4, 256, (const uint4*)(pool + off), sz[k] / 16, out);
                        off += sz[k];
                        if (k == 0) launch_smem(s, ksmall, 8, 256, smem, (const uint4*)(tiles + (size_t)l * 8 * TILE16), out, mode);
                    }
                }
            }, 2, 9);
            printf("carveout %4d, smem %3d KiB, mode %d: %7.3f ms a step (%5.1f us a layer)\n", carves[ci], smems[si], mode, best,
                   best * 1000 / layers);
        }
    }
    return 0;
}
