// carve.cu: which shared memory configuration an SM takes for a kernel, under each
// preferred carveout (cudaFuncAttributePreferredSharedMemoryCarveout) and under the
// driver's own choice, and what a change of configuration between two kernels of a
// programmatic chain costs. Session 25 found that a carveout of 44 for every kernel
// made Llama-3.1-8B Q8_0 decode ~3% faster on the H200 and 40 made Q4_K_M ~3% slower,
// with no known mapping from percentages to configurations (NOTES.md): this measures
// it.
//
// Part 1: a kernel of 32 threads and S KiB of dynamic shared memory, launched 32 blocks
// an SM, each block holding its SM for 200 us; the most blocks found on one SM at once,
// times (S + 1) KiB (an SM reserves 1 KiB a block), is the configuration's shared
// memory (blocks an SM are capped at 32).
// Part 2: 2,000 short streaming kernels (1 MB each) in one graph with programmatic
// edges, alternating between A and B of the dynamic shared memory given, under the
// driver's choice and under a carveout for both.
// nvcc -arch=sm_90 -std=c++17 -O3 -o carve carve.cu && ./carve
#include "micro.cuh"

__device__ __forceinline__ unsigned smid() {
    unsigned r;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
    return r;
}
__device__ __forceinline__ unsigned dyn_smem() {
    unsigned n;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(n));
    return n;
}

__global__ void __launch_bounds__(32) resident(int* cur, int* peak, int ns) {
    extern __shared__ volatile unsigned char pad[];
    if (threadIdx.x == 0) {
        if (dyn_smem() > 0) pad[0] = 1;
        const unsigned s = smid();
        const int n = atomicAdd(&cur[s], 1) + 1;
        atomicMax(&peak[s], n);
        spin(ns);
        atomicSub(&cur[s], 1);
    }
}

// kshort reads its part of n16 16-byte words and touches its dynamic shared memory.
__global__ void __launch_bounds__(256) kshort(const uint4* w, size_t n16, unsigned* out) {
    extern __shared__ uint4 sbuf[];
    pdl();
    unsigned acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n16; i += (size_t)gridDim.x * blockDim.x) {
        const uint4 v = __ldcs(w + i);
        acc ^= v.x + v.y + v.z + v.w;
    }
    if (dyn_smem() >= 128) {
        sbuf[threadIdx.x & 7] = make_uint4(acc, 0, 0, 0);
        __syncthreads();
        acc ^= sbuf[0].x;
    }
    if (acc == 0x12345678u) out[threadIdx.x] = acc;
}

static int peak_blocks(int sms, int smem, int carve, int* cur, int* peak) {
    CK(cudaFuncSetAttribute(resident, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 << 10));
    CK(cudaFuncSetAttribute(resident, cudaFuncAttributePreferredSharedMemoryCarveout, carve));
    CK(cudaMemset(cur, 0, 1024 * sizeof(int)));
    CK(cudaMemset(peak, 0, 1024 * sizeof(int)));
    resident<<<sms * 32, 32, smem>>>(cur, peak, 200000);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    int h[1024];
    CK(cudaMemcpy(h, peak, sizeof h, cudaMemcpyDeviceToHost));
    int best = 0;
    for (int i = 0; i < 1024; i++) best = h[i] > best ? h[i] : best;
    return best;
}

int main() {
    cudaDeviceProp pr;
    CK(cudaGetDeviceProperties(&pr, 0));
    const int sms = pr.multiProcessorCount;
    printf("%s: %d SMs, %zu KiB shared memory an SM\n", pr.name, sms, pr.sharedMemPerMultiprocessor >> 10);
    int *cur, *peak;
    CK(cudaMalloc(&cur, 1024 * sizeof(int)));
    CK(cudaMalloc(&peak, 1024 * sizeof(int)));

    printf("part 1: blocks of 7 KiB an SM (x 8 KiB = the configuration) by carveout\n");
    for (int c = 0; c <= 100; c += 2) {
        const int b = peak_blocks(sms, 7 << 10, c, cur, peak);
        printf("  carveout %3d: %2d blocks, %3d KiB\n", c, b, 8 * b);
    }
    printf("part 1: the driver's choice (carveout -1) by a block's dynamic shared memory\n");
    const int kib[8] = {0, 1, 3, 7, 15, 31, 47, 99};
    for (int i = 0; i < 8; i++) {
        const int b = peak_blocks(sms, kib[i] << 10, -1, cur, peak);
        printf("  %3d KiB a block: %2d blocks an SM (%3d KiB with the reserved 1 KiB)\n", kib[i], b, b * (kib[i] + 1));
    }

    const size_t bytes = 1 << 20, n16 = bytes / 16;
    const int chain = 2000;
    uint8_t* pool;
    CK(cudaMalloc(&pool, bytes * 64));
    CK(cudaMemset(pool, 1, bytes * 64));
    unsigned* out;
    CK(cudaMalloc(&out, 1 << 16));
    CK(cudaFuncSetAttribute(kshort, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 << 10));
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    printf("part 2: %d kernels of 1 MB alternating A and B shared memory, us a kernel\n", chain);
    const int pairs[6][2] = {{0, 0}, {0, 16}, {0, 72}, {16, 72}, {4, 18}, {72, 72}};
    const int carves[4] = {-1, 0, 44, 100};
    for (int ci = 0; ci < 4; ci++) {
        CK(cudaFuncSetAttribute(kshort, cudaFuncAttributePreferredSharedMemoryCarveout, carves[ci]));
        for (int p = 0; p < 6; p++) {
            const float ms = graph_best_ms(s, [&] {
                for (int k = 0; k < chain; k++)
                    launch_smem(s, kshort, sms * 4, 256, pairs[p][k & 1] << 10,
                                (const uint4*)(pool + (size_t)(k % 64) * bytes), n16, out);
            }, 2, 7);
            printf("  carveout %4d, A %3d KiB, B %3d KiB: %6.2f us\n", carves[ci], pairs[p][0], pairs[p][1],
                   ms * 1000 / chain);
        }
    }
    return 0;
}
