// l2pf.cu (session 23): does an L2 prefetch of the next product's weights shorten a
// chain of (stream, small latency-bound kernel) pairs? Each pair reads its own weight
// buffer (all of them together many times the L2), then a kernel spins for a few
// microseconds (a decode step's norm, RoPE or attention). The whole chain is one graph
// with programmatic edges (PDL), as Ember's steps are. The prefetch is issued by each
// streaming block after its share (mode bits: 1 cp.async.bulk.prefetch.L2, else one
// prefetch.global.L2 a line; 2 an evict_last policy; 4 the stream's loads evict_first;
// 8 plain loads of each line instead), or by the spinning kernel's 132 blocks (gapgrid);
// nb1 reads one buffer over and over (the L2-resident bound). Result on the H200: no
// prefetch ever shortened the chain (NOTES.md, session 23).
// nvcc -arch=sm_90 -O3 -o l2pf l2pf.cu && ./l2pf
#include <cstdint>
#include "micro.cuh"

// mode bits: 1 bulk prefetch (else per-thread prefetch.global.L2), 2 evict_last policy on
// the prefetch, 4 loads with an evict_first policy.
__global__ void __launch_bounds__(256) stream(const uint4* w, size_t n16, unsigned* out, const uint8_t* pf, size_t pfn, int mode) {
    pdl();
    const size_t per = (n16 + gridDim.x - 1) / gridDim.x;
    const size_t lo = per * blockIdx.x, hi = lo + per < n16 ? lo + per : n16;
    unsigned acc = 0;
    uint64_t pol;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
    for (size_t i = lo + threadIdx.x; i < hi; i += 4 * 256) {
        uint4 v[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const size_t j = i + u * 256;
            if (j < hi) {
                if (mode & 4)
                    asm volatile("ld.global.nc.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                                 : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w) : "l"(w + j), "l"(pol));
                else
                    v[u] = __ldg(w + j);
            } else
                v[u] = make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int u = 0; u < 4; u++) acc ^= v[u].x + v[u].y * 3 + v[u].z * 5 + v[u].w * 7;
    }
    if (acc == 0x12345678) out[blockIdx.x * 256 + threadIdx.x] = acc;
    if (pfn == 0) return;
    // this block's share of the next weights
    const size_t chunk = ((pfn + gridDim.x - 1) / gridDim.x + 4095) & ~(size_t)4095;
    const size_t a = chunk * blockIdx.x;
    if (a >= pfn) return;
    const size_t b = a + chunk < pfn ? a + chunk : pfn;
    if (mode & 8) {
        unsigned t = 0;
        for (size_t o = a + 128 * threadIdx.x; o < b; o += 128 * 256) t ^= __ldcg((const unsigned*)(pf + o));
        if (t == 0x12345678) out[threadIdx.x] = t;
    } else if (mode & 1) {
        if (threadIdx.x == 0) {
            uint64_t keep;
            asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(keep));
            for (size_t o = a; o < b; o += 65536) {
                const unsigned sz = (unsigned)((b - o) < 65536 ? (b - o) : 65536);
                if (mode & 2)
                    asm volatile("cp.async.bulk.prefetch.L2.global.L2::cache_hint [%0], %1, %2;" ::"l"(pf + o), "r"(sz), "l"(keep) : "memory");
                else
                    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(pf + o), "r"(sz) : "memory");
            }
        }
    } else {
        for (size_t o = a + 128 * threadIdx.x; o < b; o += 128 * 256) {
            if (mode & 2)
                asm volatile("prefetch.global.L2::evict_last [%0];" ::"l"(pf + o));
            else
                asm volatile("prefetch.global.L2 [%0];" ::"l"(pf + o));
        }
    }
}

__global__ void gap(unsigned* out, int ns, const uint8_t* pf, size_t pfn) {
    if (pfn && threadIdx.x == 0) {
        const size_t chunk = ((pfn + gridDim.x - 1) / gridDim.x + 4095) & ~(size_t)4095;
        const size_t a = chunk * blockIdx.x, b = a + chunk < pfn ? a + chunk : pfn;
        for (size_t o = a; o < b; o += 65536) {
            const unsigned sz = (unsigned)((b - o) < 65536 ? (b - o) : 65536);
            asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(pf + o), "r"(sz) : "memory");
        }
    }
    pdl();
    spin(ns);
}

int main(int argc, char** argv) {
    int dev = 0;
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, dev));
    printf("%s, %d SMs, L2 %d MB\n", p.name, p.multiProcessorCount, p.l2CacheSize >> 20);
    const size_t total = (size_t)3 << 30;
    uint8_t* pool;
    CK(cudaMalloc(&pool, total));
    CK(cudaMemset(pool, 1, total));
    unsigned* out;
    CK(cudaMalloc(&out, 1 << 24));
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    const int grid = p.multiProcessorCount * 4;
    struct Cfg { double mb; int gapns; int nb1; int gapgrid; };
    const Cfg cfgs[] = {{9.4, 9000, 1, 0}, {9.4, 9000, 0, 0}, {9.4, 9000, 0, 132}, {15, 2500, 0, 132}, {66, 2500, 0, 0}, {66, 2500, 0, 132}, {48, 4000, 0, 132}};
    const double pfs[] = {0, 4, 8, 16};
    const int modes[] = {1, 8, 9, 0, 2};
    for (const Cfg& c : cfgs) {
        const size_t sz = ((size_t)(c.mb * 1e6) + 4095) & ~(size_t)4095;
        const int nb = c.nb1 ? 1 : (int)(total / sz) < 64 ? (int)(total / sz) : 64;
        const int nrep = c.nb1 ? 64 : 1;
        double base = 0;
        for (int mi = 0; mi < 5; mi++) {
            if (c.gapgrid && mi > 0) break;  // the gap kernel's prefetch has one mode
            for (double pfm : pfs) {
                if (pfm == 0 && mi > 0) continue;
                size_t pfn = ((size_t)(pfm * 1e6) + 4095) & ~(size_t)4095;
                if (pfn > sz) pfn = sz;
                const int mode = modes[mi];
                const float best = graph_best_ms(s, [&] {
                    for (int i = 0; i < nb * nrep; i++) {
                        const uint8_t* w = pool + sz * (i % nb);
                        const uint8_t* nx = pool + sz * ((i + 1) % nb);
                        const bool bygap = c.gapgrid > 0;
                        launch(s, stream, grid, 256, (const uint4*)w, sz / 16, out, nx, bygap ? (size_t)0 : pfn, mode);
                        if (c.gapns) launch(s, gap, bygap ? c.gapgrid : 1, 32, out, c.gapns, nx, bygap ? pfn : (size_t)0);
                    }
                }, 3, 5);
                const double us = best * 1000.0 / (nb * nrep);
                if (pfm == 0) base = us;
                printf("nb1 %d gapgrid %3d w %5.1f MB gap %5.1f us mode %d pf %4.0f MB: %7.2f us a pair (%.2f TB/s over the pair, %+.2f us)\n", c.nb1, c.gapgrid, c.mb,
                       c.gapns / 1000.0, mode, pfm, us, sz / us / 1e6, us - base);
            }
        }
    }
    return 0;
}
