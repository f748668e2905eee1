// kvcopy.cu: how fast can one block copy a latent KV tile into shared memory? (Session
// 64.) attention_short576 (16 blocks, one a head) spends ~30 ns a position more per
// layer as the context grows, and neither tensor-core arithmetic (session 63) nor rows
// held in L2 (evict-last, s64-call1) moved it: is it the copy itself, one block's
// 16-byte cp.async stream (~43 GB/s an SM if so)?
//
// G blocks each copy the same N rows of 1,152 bytes (MLA's 576 halves), pages of 16
// rows in a shuffled order as a paged cache holds them, into shared memory, by:
//   0 cp.async: 16-byte chunks, 256 threads round robin (attention_short's load_k)
//   1 bulk a row: cp.async.bulk of 1,152 bytes, a thread a row, one mbarrier
//   2 bulk a page: cp.async.bulk of a page's rows at once (16 x 1,152 bytes)
//   3 loads: uint4 loads into registers, 4 in flight a thread, then st.shared
// from rows in L2 (the same rows every launch) or from HBM (each launch another region
// of a 1 GiB buffer). Each time is the best of 5 graph replays of 4,096 chained launches,
// per launch; the slope between N = 16 and N = 128 is the per-row cost.
//
// nvcc -gencode arch=compute_90a,code=sm_90a -O3 -o /tmp/kvcopy kvcopy.cu && /tmp/kvcopy
#include "micro.cuh"
#include "../../kernels/cuda/mvs.cu"  // mvs_sa, and mbar.cuh's mbarrier and bulk-copy helpers

#define ROW 1152
#define PAGE 16
#define THREADS 256
#define NL 4096  // launches a graph (each its own region from HBM)

template <int MODE>
__global__ void __launch_bounds__(THREADS) kvcopy(const uint8_t* src, const int* pages, int n, long long region,
                                                  int nreg, int launch, float* sink) {
    extern __shared__ __align__(128) uint8_t sh[];
    __shared__ __align__(8) uint64_t bar;
    const int tid = threadIdx.x;
    const uint8_t* base = src + (long long)(launch % nreg) * region;
    auto row = [&](int r) { return base + ((long long)pages[r / PAGE] * PAGE + r % PAGE) * ROW; };
    if (MODE == 0) {
        constexpr int CK = ROW / 16;
        for (int e = tid; e < n * CK; e += THREADS) {
            const int r = e / CK, c = e % CK;
            const uint32_t d = (uint32_t)__cvta_generic_to_shared(sh + r * ROW + 16 * c);
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(row(r) + 16 * c) : "memory");
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
        asm volatile("cp.async.wait_group 0;" ::: "memory");
        __syncthreads();
    } else if (MODE == 1 || MODE == 2) {
        const uint32_t b = mvs_sa(&bar);
        if (tid == 0) {
            mbar_init(b, 1);
            mbar_fence_init();
        }
        __syncthreads();
        if (tid == 0) mbar_expect(b, n * ROW);
        __syncthreads();
        if (MODE == 1 && tid < n) bulk_g2s(mvs_sa(sh + tid * ROW), row(tid), ROW, b);
        if (MODE == 2 && tid * PAGE < n) {
            const int r0 = tid * PAGE, cnt = min(PAGE, n - r0);
            bulk_g2s(mvs_sa(sh + r0 * ROW), row(r0), cnt * ROW, b);
        }
        mbar_wait(b, 0);
        __syncthreads();
    } else {
        constexpr int CK = ROW / 16;
        for (int e0 = tid; e0 < n * CK; e0 += 4 * THREADS) {
            uint4 v[4];
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const int e = e0 + j * THREADS;
                if (e < n * CK) v[j] = *(const uint4*)(row(e / CK) + 16 * (e % CK));
            }
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const int e = e0 + j * THREADS;
                if (e < n * CK) *(uint4*)(sh + (e / CK) * ROW + 16 * (e % CK)) = v[j];
            }
        }
        __syncthreads();
    }
    if (tid == 0) sink[blockIdx.x] += *(const float*)(sh + ((n - 1) * ROW + 4 * launch % ROW));
}

template <int MODE>
static float time_one(cudaStream_t s, const uint8_t* src, const int* pages, int n, int grid, bool hbm, float* sink) {
    const long long region = 256 << 10;  // 14 pages of 16 rows
    const int nreg = hbm ? 4096 : 1;     // 1 GiB of regions: no launch finds its rows in L2
    const int smem = n * ROW;
    CK(cudaFuncSetAttribute(kvcopy<MODE>, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
    auto body = [&]() {
        for (int i = 0; i < NL; i++) kvcopy<MODE><<<grid, THREADS, smem, s>>>(src, pages, n, region, nreg, i, sink);
    };
    return graph_best_ms(s, body, 1, 5) * 1000.0f / NL;
}

int main() {
    uint8_t* src;
    int* pages;
    float* sink;
    const size_t bytes = 1ull << 30;
    CK(cudaMalloc(&src, bytes));
    CK(cudaMemset(src, 0x3c, bytes));
    CK(cudaMalloc(&sink, 1024 * sizeof(float)));
    CK(cudaMemset(sink, 0, 1024 * sizeof(float)));
    int hp[10];
    for (int i = 0; i < 10; i++) hp[i] = (i * 5 + 3) % 14;  // shuffled pages within a region
    CK(cudaMalloc(&pages, sizeof(hp)));
    CK(cudaMemcpy(pages, hp, sizeof(hp), cudaMemcpyHostToDevice));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const char* names[4] = {"cp.async 16B", "bulk a row", "bulk a page", "uint4 loads"};
    for (int grid : {16, 132}) {
        for (int hbm = 0; hbm < 2; hbm++) {
            printf("grid %d, rows from %s (us a launch):\n", grid, hbm ? "HBM" : "L2");
            for (int mode = 0; mode < 4; mode++) {
                float t[4];
                const int ns[4] = {16, 64, 128, 160};
                for (int k = 0; k < 4; k++) {
                    const int n = ns[k];
                    switch (mode) {
                    case 0: t[k] = time_one<0>(s, src, pages, n, grid, hbm, sink); break;
                    case 1: t[k] = time_one<1>(s, src, pages, n, grid, hbm, sink); break;
                    case 2: t[k] = time_one<2>(s, src, pages, n, grid, hbm, sink); break;
                    default: t[k] = time_one<3>(s, src, pages, n, grid, hbm, sink); break;
                    }
                }
                printf("  %-13s N=16 %6.2f  N=64 %6.2f  N=128 %6.2f  N=160 %6.2f  slope %5.1f ns a row (%5.1f GB/s a block)\n",
                       names[mode], t[0], t[1], t[2], t[3], (t[2] - t[0]) * 1000 / 112,
                       112.0 * ROW / ((t[2] - t[0]) * 1000));
            }
        }
    }
    CK(cudaDeviceSynchronize());
    return 0;
}
