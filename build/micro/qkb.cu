// qkb.cu (session 69; its chain setup died of a misaligned address in session 72):
// DeepSeek-V2-Lite's absorbed query of one decode row (q_nope's product, its Q8_0
// rounding, attn_k_b's per-head product) in one launch of clusters a head, against the
// engine's chain of three.
//
// The chain (the attention's main run, PDL edges): mmv_q4_k_1e (q_nope: 16 heads x 128
// rows of 2,048, Q4_K), quant_q8 (each head's 128 values to Q8_0), mmv_idw_q8_0
// (attn_k_b: each head's 512 x 128 Q8_0 matrix times its row, into the latent dims of
// the head's [rope 64 | latent 512] row). attn_k_b's head h needs q_nope's head h only,
// yet waits for every head (two whole-grid dependencies, ~8 us of the chain in s64's
// timeline: q_nope 2.9, quant_q8 1.3, attn_k_b 3.9).
//
// The fused form is the engine's own kernel (kernels/cuda/absorb.cu, session 70's port of
// this micro's first kernel): a cluster of 8 blocks a head. Block r computes q_nope rows
// 16 r .. 16 r + 15 of its head (warp w two: mv1_q4_k's lanes and sums), the cluster's 128 values are read
// from the peers' shared memory and rounded to Q8_0 by four warps (q8_quant_lane:
// quant_q8's bytes), and block r computes attn_k_b rows 64 r .. 64 r + 63 (a row's four
// Q8_0 blocks on eight lanes; the lane terms added in mv1_q8_0's butterfly order, so the
// same bits as mmv_idw_q8_0). Every weight of the block (q_nope's and attn_k_b's) is
// loaded before the PDL wait: nothing in it depends on the kernel before. No partial
// sums: the outputs are compared bit for bit.
//
// nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/qkb qkb.cu && /tmp/qkb
#include "micro.cuh"
#include "../../kernels/cuda/matmul.cu"
#include "../../kernels/cuda/quant.cu"
#include "ffnhost.cuh"

#define QH 16     // heads
#define QN 128    // q_nope values a head
#define QE 2048   // the row's width
#define QL 512    // latent values a head
#define QR 576    // a head's attention row: rope 64, latent 512
#include "../../kernels/cuda/absorb.cu"  // the engine's kernel, absorb_q4_k_q8_0 (clusters of ABS_CS blocks a head)

int main() {
    const int L = getenv("L") ? atoi(getenv("L")) : 27, gap = getenv("GAP") ? atoi(getenv("GAP")) : 0;
    const i64 wqs = rowbytes(T_Q4_K, QE), kbs = rowbytes(T_Q8_0, QN), kbest = kbs * QL;
    const size_t qb = (size_t)QH * QN * wqs, kb = (size_t)QH * kbest;
    std::vector<uint8_t*> wq(L), wk(L);
    for (int l = 0; l < L; l++) {
        CK(cudaMalloc(&wq[l], qb));
        CK(cudaMalloc(&wk[l], kb));
        fill_weights(wq[l], T_Q4_K, QH * QN, QE, 1 + 2 * l);
        fill_weights(wk[l], T_Q8_0, QH * QL, QN, 2 + 2 * l);
    }
    float *qn, *qnf, *dc, *df;  // q_nope rows: the chain's, the fused launch's
    uint8_t *xq = ffn_input(QE), *q8;  // the row's Q8_K values
    const int xqn = xbytes(QE), q8s = ((QN + 4 * (QN / 32)) + 15) & ~15;
    CK(cudaMalloc(&qn, QH * QN * 4));
    CK(cudaMalloc(&qnf, QH * QN * 4));
    CK(cudaMalloc(&q8, QH * q8s));
    CK(cudaMalloc(&dc, (size_t)L * QH * QR * 4));
    CK(cudaMalloc(&df, (size_t)L * QH * QR * 4));
    CK(cudaMemset(dc, 0, (size_t)L * QH * QR * 4));
    CK(cudaMemset(df, 0, (size_t)L * QH * QR * 4));
    unsigned* outp;
    CK(cudaMalloc(&outp, 1 << 20));
    CK(cudaDeviceSynchronize());
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    const int nrb = QL / (4 * Q80_ID_R1);
    auto chain = [&]() {
        for (int l = 0; l < L; l++) {
            launch_smem(st, mmv_q4_k_1e, QH * QN / (4 * Q4K_R1), 128, xqn, (const uint8_t*)wq[l], wqs, (const uint8_t*)xq, (i64)0, qn,
                        (i64)0, QH * QN, QE, 1);
            launch(st, quant_q8, dim3((QN / 32 + 7) / 8, QH), 256, q8, (i64)q8s, (const float*)qn, QN, 0);
            launch_smem(st, mmv_idw_q8_0, QH * nrb, 128, q8s, (const uint8_t*)wk[l], kbs, (const uint8_t*)q8, (i64)q8s,
                        dc + (i64)l * QH * QR + 64, (i64)QR, QL, QN, 1, (const int*)nullptr, kbest, 1, nrb, 1, (const uint8_t*)nullptr,
                        (float*)nullptr, (i64)0, 0, 0);
            if (gap) launch(st, kgap, 1, 32, outp, gap);
        }
    };
    auto fused = [&]() {
        for (int l = 0; l < L; l++) {
            launch(st, absorb_q4_k_q8_0, QH * ABS_CS, 256, (const uint8_t*)wq[l], wqs, (const uint8_t*)xq, QE, qnf,
                   (const uint8_t*)wk[l], kbs, kbest, df + (i64)l * QH * QR + 64, (i64)QR);
            if (gap) launch(st, kgap, 1, 32, outp, gap);
        }
    };
    printf("%d layers' absorbed queries (%.2f MB of weights a layer); gap %d ns\n", L, (qb + kb) / 1e6, gap);
    chain();
    fused();
    CK(cudaStreamSynchronize(st));
    CK(cudaGetLastError());
    std::vector<float> a((size_t)L * QH * QR), b(a.size());
    CK(cudaMemcpy(a.data(), dc, a.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(b.data(), df, b.size() * 4, cudaMemcpyDeviceToHost));
    size_t diff = 0, nz = 0;
    for (size_t q = 0; q < a.size(); q++) diff += memcmp(&a[q], &b[q], 4) != 0, nz += a[q] != 0;
    printf("outputs differing %zu of %zu (%zu non-zero)%s\n", diff, a.size(), nz, diff || nz < a.size() / 2 ? "  WRONG" : "");
    for (int rd = 0; rd < 3; rd++)
        printf("round %d: chain %.2f, qkb %.2f us a layer\n", rd, 1e3 * graph_best_ms(st, chain, 2, 5) / L,
               1e3 * graph_best_ms(st, fused, 2, 5) / L);
    return 0;
}
