// att1.cu: a batch-1 decode step's attention, as the engine runs it (attention_dec128 with
// its Q8_K output rounding, kernels/cuda/attention_dec.cu included as it is) and as
// attention_dec128_1 (attention_one.cuh: the same arguments), a kernel for one
// row over a short context (at most A1_N positions) with fewer barriers and half the
// warps, over a paged cache (blocks of 16 rows, shuffled), in a chain like the engine's: a RoPE stand-in (rope2_set's
// place: it writes the query and the new position's key and value rows), the attention,
// then the output projection (mmv_q4_k_1 over the attention's Q8_K row), for 32 layers
// of Llama-3.1-8B's shapes (32 query heads, 8 KV heads of 128 dims), in one graph with
// PDL edges. Session 33's skip study put attention_dec at ~4 us a layer of the 8B
// Q4_K_M tg128 chain (498 tok/s without it, 468 with).
//
// attention_one.cuh describes it. Four barriers after its wait where attention_dec128 takes ~15-19
// with 8 warps. The softmax sums and P V run in other orders, so outputs differ from
// attention_dec128's in the last bits; the run prints the largest difference and the
// Q8_K quants that differ.
//
// nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o att1 att1.cu && ./att1 && N=33 ./att1 && N=256 ./att1
#include "micro.cuh"
#include "../../kernels/cuda/attention_dec.cu"
#include "../../kernels/cuda/matmul.cu"
#include "../../kernels/cuda/quant.cu"
#include <cmath>
#include <cstring>
#include <vector>


// rope_standin: rope2_set's place in the chain: the query and the new position's key and
// value rows written (copied from src) at its cache row (tab: blocks of 16 rows), 9 blocks
// of 128 threads as rope2_set's grid.
__global__ void rope_standin(float* q, const float* qs, uint16_t* k, uint16_t* v, const uint16_t* ks, const int* pos, int nq,
                             int nkvd, const int* tab) {
    pdl();
    const int r = tab[pos[0] / 16] * 16 + pos[0] % 16;
    for (int e = blockIdx.x * 128 + threadIdx.x; e < nq; e += gridDim.x * 128) q[e] = qs[e];
    for (int e = blockIdx.x * 128 + threadIdx.x; e < nkvd; e += gridDim.x * 128) k[(i64)r * nkvd + e] = ks[e], v[(i64)r * nkvd + e] = ks[nkvd + e];
}

int main() {
    const int N = getenv("N") ? atoi(getenv("N")) : 128, L = 32, nhead = 32, nkv = 8, D = 128;
    if (N < 1 || N > A1_N) {
        printf("N must be 1..%d\n", A1_N);
        return 1;
    }
    const int nq = nhead * D, nkvd = nkv * D, xb = ((Q8K_BSUMS(nq) + 4 * (nq / 16)) + 15) & ~15, ws = nq / 256 * 144;
    const float scale = 1.0f / sqrtf((float)D);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    // per layer: caches of A1_N rows (random f16 in [-1, 1)), the query and new rows' sources,
    // the attention's output and Q8_K row, the output projection's weights and output
    std::vector<uint16_t*> kc(L), vc(L), ks(L);
    std::vector<float *> qs(L), q(L), att(L), o(L);
    std::vector<uint8_t *> x8(L), wo(L);
    unsigned rng = 12345;
    auto rnd = [&]() { rng = rng * 1664525u + 1013904223u; return (float)((rng >> 8) & 0xffff) / 32768.0f - 1.0f; };
    auto f2hh = [](float f) { __half h = __float2half(f); return *(uint16_t*)&h; };
    std::vector<uint16_t> hc((size_t)A1_N * nkvd);
    std::vector<float> hq(nq);
    for (int l = 0; l < L; l++) {
        CK(cudaMalloc(&kc[l], hc.size() * 2));
        CK(cudaMalloc(&vc[l], hc.size() * 2));
        for (auto& x : hc) x = f2hh(rnd());
        CK(cudaMemcpy(kc[l], hc.data(), hc.size() * 2, cudaMemcpyHostToDevice));
        for (auto& x : hc) x = f2hh(rnd());
        CK(cudaMemcpy(vc[l], hc.data(), hc.size() * 2, cudaMemcpyHostToDevice));
        CK(cudaMalloc(&ks[l], 2 * nkvd * 2));
        CK(cudaMemcpy(ks[l], hc.data(), 2 * nkvd * 2, cudaMemcpyHostToDevice));
        for (auto& x : hq) x = 2.0f * rnd();
        CK(cudaMalloc(&qs[l], nq * 4));
        CK(cudaMemcpy(qs[l], hq.data(), nq * 4, cudaMemcpyHostToDevice));
        CK(cudaMalloc(&q[l], nq * 4));
        CK(cudaMalloc(&att[l], nq * 4));
        CK(cudaMalloc(&x8[l], xb));
        CK(cudaMalloc(&wo[l], (size_t)nq * ws));
        CK(cudaMemset(wo[l], 0x11, (size_t)nq * ws));  // f16 scales 0x1111: small and finite
        CK(cudaMalloc(&o[l], nq * 4));
    }
    int *pos, *tab, *seq;
    CK(cudaMalloc(&pos, 4));
    const int p = N - 1;
    CK(cudaMemcpy(pos, &p, 4, cudaMemcpyHostToDevice));
    // a paged cache: blocks of 16 rows in a shuffled order (as TestBatchedDecodeAttention's)
    std::vector<int> perm(A1_N / 16);
    for (int b = 0; b < (int)perm.size(); b++) perm[b] = b;
    for (int b = (int)perm.size() - 1; b > 0; b--) std::swap(perm[b], perm[rng % (b + 1)]), rng = rng * 1664525u + 1013904223u;
    CK(cudaMalloc(&tab, perm.size() * 4));
    CK(cudaMemcpy(tab, perm.data(), perm.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&seq, 4));
    CK(cudaMemset(seq, 0, 4));
    const int tcols = (int)perm.size();
    const int ns = 4, scap = (N + 63) / 64 * 64 <= 256 ? 256 : 0;
    // att1's form: the engine's for N positions (dec1Form: a cap of 64, 128 or 256), or CAP's
    const int cap1 = getenv("CAP") ? atoi(getenv("CAP")) : N <= 64 ? 64 : N <= 128 ? 128 : A1_N;
    auto att1 = cap1 == 64 ? attention_dec128_1_64 : cap1 == 128 ? attention_dec128_1_128 : attention_dec128_1;
    if (N > cap1) {
        printf("N %d is more than CAP %d\n", N, cap1);
        return 1;
    }
    const int dsm = dec_smem(128, false, scap, ns), asm1 = a1_smem(128, cap1);
    CK(cudaFuncSetAttribute(attention_dec128, cudaFuncAttributeMaxDynamicSharedMemorySize, dsm));
    CK(cudaFuncSetAttribute(att1, cudaFuncAttributeMaxDynamicSharedMemorySize, asm1));
    const int v = getenv("V") ? atoi(getenv("V")) : -1;
    auto chain = [&](int variant) {  // 0 attention_dec128, 1 att1, 2 no attention
        for (int l = 0; l < L; l++) {
            launch(s, rope_standin, 9, 128, q[l], (const float*)qs[l], kc[l], vc[l], (const uint16_t*)ks[l], (const int*)pos, nq, nkvd,
                   (const int*)tab);
            if (variant < 2)  // the same arguments (DEC_ARGS) for both
                launch_smem(s, variant ? att1 : attention_dec128, dim3(1, nkv), variant ? 128 : DEC_THREADS, variant ? asm1 : dsm,
                            att[l], (i64)nq, (const float*)q[l], (i64)nq, (const uint16_t*)kc[l], (i64)nkvd, (const uint16_t*)vc[l],
                            (i64)nkvd, (const int*)pos, nhead, nkv, D, D, scale, (const int*)tab, tcols, (const int*)seq, 16, scap, ns,
                            x8[l], (i64)xb, (uint8_t*)nullptr, (i64)0);
            launch_smem(s, mmv_q4_k_1, nq / 16, 128, xb, (const uint8_t*)wo[l], (i64)ws, (const uint8_t*)x8[l], (i64)0, o[l], (i64)0,
                        nq, nq, 1);
        }
    };
    // both attentions' outputs, layer 0 and the last, against each other
    std::vector<float> out[2];
    std::vector<uint8_t> xq[2];
    for (int k = 0; k < 2; k++) {
        chain(k);
        CK(cudaStreamSynchronize(s));
        for (int l : {0, L - 1}) {
            const size_t n0 = out[k].size();
            out[k].resize(n0 + nq);
            CK(cudaMemcpy(out[k].data() + n0, att[l], nq * 4, cudaMemcpyDeviceToHost));
            const size_t x0 = xq[k].size();
            xq[k].resize(x0 + nq);
            CK(cudaMemcpy(xq[k].data() + x0, x8[l], nq, cudaMemcpyDeviceToHost));
        }
    }
    double md = 0, mx = 0;
    size_t qd = 0;
    for (size_t i = 0; i < out[0].size(); i++) md = fmax(md, fabs(out[0][i] - out[1][i])), mx = fmax(mx, fabs(out[0][i]));
    for (size_t i = 0; i < xq[0].size(); i++) qd += xq[0][i] != xq[1][i];
    printf("N %d: att1 against attention_dec128: largest difference %.3g of %.3g%s; Q8_K quants differing %zu of %zu\n", N, md, mx,
           md > 2e-2 * mx ? "  WRONG" : "", qd, xq[0].size());
    float t[3];
    for (int k = 0; k < 3; k++) t[k] = v < 0 || v == k ? graph_best_ms(s, [&]() { chain(k); }, 2, 5) : 0;
    printf("N %d, 32 layers of RoPE stand-in, attention, output projection: attention_dec128 %.1f us, att1 %.1f, none %.1f "
           "(a layer: %.2f, %.2f, %.2f)\n",
           N, 1e3 * t[0], 1e3 * t[1], 1e3 * t[2], 1e3 * t[0] / L, 1e3 * t[1] / L, 1e3 * t[2] / L);
    return 0;
}
