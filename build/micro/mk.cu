// mk.cu: what does a persistent kernel with grid barriers gain over a chain of kernels
// (graph, PDL) for a batch-1 decode step's weight streams? 32 layers of Llama-3.1-8B
// Q4_K_M byte counts (Q/K/V 15.2 MB, O 9.4, gate/up 66, down 48), read once each.
// A: one streaming kernel a product, small one-block kernels between them (gapns each);
// B: the same products in one persistent kernel, a grid barrier between products, the
// small kernels' time spent by block 0 before the barrier's release.
// Result on the H200: the persistent kernel is no faster (NOTES.md, session 23).
// nvcc -arch=sm_90 -std=c++17 -O3 -o mk mk.cu && ./mk
#include <cstdint>
#include "micro.cuh"

// barrier: every block adds one to *count; all wait until it reaches target.
__device__ __forceinline__ void grid_barrier(unsigned* count, unsigned target) {
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(count) : "memory");
        while (ld_acquire(count) < target) {
        }
    }
    __syncthreads();
}

struct Plan { const uint4* w[4 * 32]; size_t n16[4 * 32]; int np; };

__global__ void __launch_bounds__(256) kpersist(const __grid_constant__ Plan p, unsigned* out, unsigned* count, int gapns, int pre) {
    unsigned acc = 0, target = 0;
    for (int i = 0; i < p.np; i++) {
        acc ^= stream_share(p.w[i], p.n16[i], blockIdx.x, gridDim.x);
        target += gridDim.x;
        grid_barrier(count, target);
        // the small kernel between products: one block's work, then a barrier
        if (gapns) {
            if (blockIdx.x == 0) spin(gapns);
            target += gridDim.x;
            grid_barrier(count, target);
        }
    }
    if (acc == 0x12345678) out[blockIdx.x * 256 + threadIdx.x] = acc;
}

int main() {
    cudaDeviceProp pr;
    CK(cudaGetDeviceProperties(&pr, 0));
    const int sms = pr.multiProcessorCount;
    const double mb[4] = {15.2, 9.4, 66, 48};
    const int layers = 32;
    size_t sz[4], total = 0;
    for (int k = 0; k < 4; k++) sz[k] = ((size_t)(mb[k] * 1e6) + 4095) & ~(size_t)4095, total += sz[k];
    uint8_t* pool;
    CK(cudaMalloc(&pool, total * layers));
    CK(cudaMemset(pool, 1, total * layers));
    unsigned *out, *count;
    CK(cudaMalloc(&out, 1 << 24));
    CK(cudaMalloc(&count, 4));
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    Plan p;
    p.np = 0;
    {
        size_t off = 0;
        for (int l = 0; l < layers; l++)
            for (int k = 0; k < 4; k++) p.w[p.np] = (const uint4*)(pool + off), p.n16[p.np++] = sz[k] / 16, off += sz[k];
    }
    const double gb = (double)total * layers / 1e9;
    int occ = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kpersist, 256, 0));
    printf("%s: %d SMs, %.2f GB a step, persistent occupancy %d blocks an SM\n", pr.name, sms, gb, occ);
    auto timeit = [&](auto body, const char* name) {
        const float best = graph_best_ms(s, body, 2, 7);
        printf("%-44s %7.3f ms a step (%5.1f us a layer, %.2f TB/s, %4.0f steps/s)\n", name, best, best * 1000 / layers, gb / best, 1000 / best);
    };
    const int gaps[] = {0, 1000, 2500};
    for (int gi = 0; gi < 3; gi++) {
        const int gns = gaps[gi];
        for (int bpsm = 1; bpsm <= 4; bpsm *= 2) {
            char name[96];
            snprintf(name, sizeof name, "chain, gap %d ns, grid %d a SM", gns, bpsm);
            timeit([&] {
                for (int i = 0; i < p.np; i++) {
                    launch(s, kstream, sms * bpsm, 256, p.w[i], p.n16[i], out);
                    if (gns) launch(s, kgap, 1, 32, out, gns);
                }
            }, name);
        }
        for (int bpsm = 1; bpsm <= occ && bpsm <= 4; bpsm *= 2) {
            char name[96];
            snprintf(name, sizeof name, "persistent, gap %d ns, %d blocks a SM", gns, bpsm);
            timeit([&] {
                CK(cudaMemsetAsync(count, 0, 4, s));
                kpersist<<<sms * bpsm, 256, 0, s>>>(p, out, count, gns, 0);
                CK(cudaGetLastError());
            }, name);
        }
    }
    return 0;
}
