// ifetch.cu (session 43): what a small kernel's straight-line code costs when a weight
// stream has just passed through L2. Session 43 found moe_topk ~3.8 us a layer slower
// with ~600 more straight-line instructions on its one warp (~6 ns an instruction),
// while the same work as loops was even. V2-Lite streams ~55 MB of weights a layer
// through the 50 MB L2, so a kernel's code may have to come from HBM each time it runs.
//
// The chain (one graph, programmatic edges as Ember's steps have): L layers of a
// streaming kernel over its own S MB buffer, then tiny<N>, one warp running N
// independent FFMAs straight through (no loop). For each N it prints tiny<N> alone in a
// chain (code warm), and the pair's time less the stream's alone, with the stream's
// loads plain and with an L2 evict-first policy (wevict.patch's ldw16). If the code is
// fetched cold after a plain stream and warm after an evict-first one, the first gap
// grows with N and the second does not.
// nvcc -arch=sm_90 -O3 -fmad=false -o ifetch ifetch.cu && ./ifetch
#include <cstdint>
#include "micro.cuh"

template <int N>
__global__ void __launch_bounds__(32) tiny(float* out, float a) {
    pdl();
    float x[8];
#pragma unroll
    for (int i = 0; i < 8; i++) x[i] = (float)(threadIdx.x + i);
#pragma unroll
    for (int k = 0; k < N / 8; k++)
#pragma unroll
        for (int i = 0; i < 8; i++) x[i] = fmaf(x[i], a, 1.0f);
    float s = 0;
#pragma unroll
    for (int i = 0; i < 8; i++) s += x[i];
    if (s == 12345.0f) out[threadIdx.x] = s;
}

// kstream_ef is micro.cuh's kstream with its loads under an L2 evict-first policy.
__global__ void __launch_bounds__(256) kstream_ef(const uint4* w, size_t n16, unsigned* out) {
    pdl();
    const unsigned acc = stream_share<true>(w, n16, blockIdx.x, gridDim.x);
    if (acc == 0x12345678) out[blockIdx.x * 256 + threadIdx.x] = acc;
}

struct Chain {
    cudaStream_t s;
    uint8_t* pool;
    size_t sz;
    int layers, grid;
    unsigned* out;
    float* fout;
};

// us_per_layer times the chain: stream mode (0 none, 1 plain, 2 evict-first), then k.
template <typename K>
static double us_per_layer(const Chain& c, int mode, K k) {
    const float ms = graph_best_ms(c.s, [&] {
        for (int l = 0; l < c.layers; l++) {
            const uint4* w = (const uint4*)(c.pool + c.sz * l);
            if (mode == 1) launch(c.s, kstream, c.grid, 256, w, c.sz / 16, c.out);
            if (mode == 2) launch(c.s, kstream_ef, c.grid, 256, w, c.sz / 16, c.out);
            if (k) launch(c.s, k, 1, 32, c.fout, 1.0001f);
        }
    }, 3, 7);
    return ms * 1000.0 / c.layers;
}

template <int N>
static void row(const Chain& c, const double base[3]) {
    const double alone = us_per_layer(c, 0, tiny<N>);
    const double p1 = us_per_layer(c, 1, tiny<N>), p2 = us_per_layer(c, 2, tiny<N>);
    printf("N %5d: alone %6.2f us; after a plain stream %+6.2f us; after an evict-first stream %+6.2f us\n", N, alone, p1 - base[1],
           p2 - base[2]);
}

int main() {
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("%s, %d SMs, L2 %d MB\n", p.name, p.multiProcessorCount, p.l2CacheSize >> 20);
    const double mbs[] = {16, 55};
    for (double mb : mbs) {
        Chain c;
        c.layers = 32;
        c.sz = ((size_t)(mb * 1e6) + 4095) & ~(size_t)4095;
        c.grid = p.multiProcessorCount * 4;
        CK(cudaMalloc(&c.pool, c.sz * c.layers));
        CK(cudaMemset(c.pool, 1, c.sz * c.layers));
        CK(cudaMalloc(&c.out, 1 << 24));
        CK(cudaMalloc(&c.fout, 1 << 12));
        CK(cudaStreamCreate(&c.s));
        void (*none)(float*, float) = nullptr;
        const double base[3] = {0, us_per_layer(c, 1, none), us_per_layer(c, 2, none)};
        printf("== %d layers of %.0f MB: the stream alone %.2f us plain, %.2f us evict-first\n", c.layers, mb, base[1], base[2]);
        row<8>(c, base);
        row<512>(c, base);
        row<2048>(c, base);
        row<8192>(c, base);
        CK(cudaFree(c.pool));
        CK(cudaFree(c.out));
        CK(cudaFree(c.fout));
        CK(cudaStreamDestroy(c.s));
    }
    return 0;
}
