// ffs.cu: the engine's one-launch FFN half (kernels/cuda/ffn.cu: ffn_q4_k, ffn_q6_k)
// against the chain it replaces, 32 layers in one graph with PDL edges (written in
// session 68).
//
// The chain (the engine's launches; ffn.cu's micro): mmv_multi (gate and up, 14,336 rows
// of 4,096), swiglu_q8_k (SwiGLU and the Q8_K rounding of the 14,336 values), then
// mmv_q4_k_1 or mmv_q6_k_1 (down, 4,096 rows of 14,336). kernels/cuda/ffn.cu cuts the
// hidden width instead: clusters of eight blocks, each cluster 512 hidden values (their
// gate and up rows, SwiGLU and Q8_K row, and those columns' share of every down row),
// the clusters' partial sums added by the last block of each share in cluster order.
//
// Session 68 chose that form here, in this file's first version (commit 9db16de: the
// kernel written out with CS blocks a cluster, GPC Q8_K blocks a cluster, W warps, the
// partial sums by float atomics or in order, down's first step before or after the
// cluster's barriers; NOTES.md has its figures): ~2 us a layer ahead of the chain.
// In the engine the same form lost (8B tg128 522.2 against 525.2). One difference: the
// engine's kernels take their cluster from __cluster_dims__, the first version's from
// the launch attribute. This version runs the engine's code both ways: ffn_q4_k and
// ffn_q6_k as compiled (CDIMS=1) and the same code in kernels without __cluster_dims__
// launched with the attribute (CDIMS=0, as session 68's figures were taken).
//
// Prints the check (the SwiGLU values and their Q8_K row bit for bit, down's outputs
// within float rounding of the same terms in another order) and graph times of L
// layers, GAP ns of a spinning kernel between FFN halves (where the attention half runs).
//
// nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/ffs ffs.cu && /tmp/ffs && CDIMS=1 /tmp/ffs
#include "micro.cuh"
#include "../../kernels/cuda/matmul.cu"
#include "../../kernels/cuda/quant.cu"
#include "../../kernels/cuda/ffn.cu"
#include "ffnhost.cuh"
#include <cmath>

#define FS_E 4096
#define FS_F 14336
#define FS_NCL (FS_F / FFN_XQ)

// The engine's code in kernels without __cluster_dims__ (their cluster from the launch).
extern "C" __global__ void __launch_bounds__(32 * FFN_W, 2) ffn_rt_q4_k(FFN_ARGS) {
    ffn<T_Q4_K>(xq, E, gate, up, gws, g, u, F, sw, x14, down, dws, dst, P, cnt);
}
extern "C" __global__ void __launch_bounds__(32 * FFN_W, 2) ffn_rt_q6_k(FFN_ARGS) {
    ffn<T_Q6_K>(xq, E, gate, up, gws, g, u, F, sw, x14, down, dws, dst, P, cnt);
}

int main() {
    const int cdims = getenv("CDIMS") ? atoi(getenv("CDIMS")) : 0;
    FfnRun R(FS_E, FS_F, FS_NCL, FFN_CS);
    const int L = R.L, gap = R.gap, gws = R.gws, xn14 = R.xnf;
    std::vector<FfnLayer>& ly = R.ly;
    const size_t bytes = R.bytes;
    uint8_t *x = R.x, *x14c = R.x14c, *x14f = R.x14f;
    float *gc = R.gc, *uc = R.uc, *gf = R.gf, *uf = R.uf, *P = R.P;
    unsigned *cnt = R.cnt, *out = R.out;
    cudaStream_t s = R.s;
    auto chain = [&]() { R.chain(); };
    // ffn.go's ffnSmem: the staged row (at least ffn_sum's scratch), the block's gate, up
    // and SwiGLU values, the cluster's Q8_K row
    const int smem = ffn_stage(FS_E) + 3 * 4 * FFN_RA + xbytes(FFN_XQ);
    const int grid = FS_NCL * FFN_CS;
    auto fused = [&]() {
        for (int l = 0; l < L; l++) {
            const FfnLayer& y = ly[l];
            const bool q4 = y.dtype == T_Q4_K;
            const uint8_t *xa = x, *ga = y.gate, *ua = y.up, *da = y.down;
            const i64 g64 = gws, d64 = rowbytes(y.dtype, FS_F);
            if (cdims)
                launch_smem(s, q4 ? ffn_q4_k : ffn_q6_k, grid, 32 * FFN_W, smem, xa, FS_E, ga, ua, g64, gf, uf, FS_F, gf, x14f, da, d64,
                            y.df, P, cnt);
            else
                launch_cl(s, q4 ? ffn_rt_q4_k : ffn_rt_q6_k, grid, 32 * FFN_W, smem, FFN_CS, xa, FS_E, ga, ua, g64, gf, uf, FS_F, gf,
                          x14f, da, d64, y.df, P, cnt);
            if (gap) launch(s, kgap, 1, 32, out, gap);
        }
    };
    printf("%.2f GB of FFN weights in %d layers; gap %d ns; ffn's cluster from %s; grid %d, smem %d\n", bytes / 1e9, L, gap,
           cdims ? "__cluster_dims__" : "the launch attribute", grid, smem);
    chain();
    fused();
    CK(cudaStreamSynchronize(s));
    CK(cudaGetLastError());
    double worst, amax;
    R.down_diff(&worst, &amax);
    size_t diff = 0;
    auto bytes_differ = [&](const void* p, const void* q, size_t nb) {
        std::vector<uint8_t> a(nb), b(nb);
        CK(cudaMemcpy(a.data(), p, nb, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(b.data(), q, nb, cudaMemcpyDeviceToHost));
        for (size_t j = 0; j < nb; j++) diff += a[j] != b[j];
    };
    bytes_differ(x14c, x14f, xn14);
    bytes_differ(gc, gf, FS_F * 4);
    bytes_differ(uc, uf, FS_F * 4);
    printf("down max |diff| %.3g of max |out| %.3g (%.2g); SwiGLU, up and Q8_K bytes differing %zu%s\n", worst, amax, worst / amax,
           diff, diff || worst > 2e-6 * amax ? "  WRONG" : "");
    for (int r = 0; r < 2; r++) {
        const float tc = graph_best_ms(s, chain, 2, 5), tf = graph_best_ms(s, fused, 2, 5);
        printf("round %d: chain %.3f ms (%.2f TB/s, %.2f us a layer), ffn %.3f ms (%.2f TB/s, %.2f us a layer)\n", r, tc,
               bytes / (tc * 1e-3) / 1e12, 1e3 * tc / L, tf, bytes / (tf * 1e-3) / 1e12, 1e3 * tf / L);
    }
    return 0;
}
