// att1.cu: a batch-1 decode step's attention, as the engine runs it (attention_dec128 with
// its Q8_K output rounding, kernels/cuda/attention_dec.cu included as it is) and as
// att1, a kernel for one row over a short context (at most A1_N positions) with fewer
// barriers and half the warps, in a chain like the engine's: a RoPE stand-in (rope2_set's
// place: it writes the query and the new position's key and value rows), the attention,
// then the output projection (mmv_q4_k_1 over the attention's Q8_K row), for 32 layers
// of Llama-3.1-8B's shapes (32 query heads, 8 KV heads of 128 dims), in one graph with
// PDL edges. Session 33's skip study put attention_dec at ~4 us a layer of the 8B
// Q4_K_M tg128 chain (498 tok/s without it, 468 with).
//
// att1 (a block per KV head, 4 warps): before its wait it copies the keys and values of
// every position but the newest (rows written by earlier steps) into shared memory; after
// it, the query and the newest rows (one round trip); the scores of every position at
// once (attention_dec's dec_scores, so each score has its bits), kept in registers; the
// softmax statistics meet once; the probabilities (rounded to f16 as the reference does)
// go to shared memory; each warp takes 32 output dims over all positions (no halves to
// meet); the output and its Q8_K rounding (a warp a 256-element block). Four barriers
// after the wait where attention_dec128 takes ~15-19 with 8 warps. The softmax sums and
// P V run in other orders, so outputs differ from attention_dec128's in the last bits;
// the run prints the largest difference.
//
// nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o att1 att1.cu && ./att1 && N=33 ./att1 && N=256 ./att1
#include "micro.cuh"
#include "../../kernels/cuda/attention_dec.cu"
#include "../../kernels/cuda/matmul.cu"
#include "../../kernels/cuda/quant.cu"
#include <cmath>
#include <cstring>
#include <vector>

#define A1_N 256                      // positions att1 takes
#define A1_PLD (2 * A1_N + 16)        // bytes of a P row (padded: ldmatrix's rows miss each other's banks)
#define A1_G 16                       // query rows of the tile (heads of a KV head; the rest zeros)
constexpr int a1_smem(int d) { return 2 * 16 * d + 2 * (2 * A1_N * d) + 16 * A1_PLD + 16 * d * 4; }

// att1: dst [nhead*D] f32 and q8 (the row's Q8_K rounding) from q [nhead*D] f32 and the
// F16 caches k, v (row t of KV head h at t*kstride + h*D halves), nk = pos[0] + 1 keys.
template <int D>
__global__ void __launch_bounds__(128) att1(float* dst, const float* q, const uint16_t* k, int kstride, const uint16_t* v,
                                            int vstride, const int* pos, int G, float scale, uint8_t* q8, int nhead) {
    extern __shared__ __align__(128) uint8_t sm[];
    __shared__ float stat[4][16][2];
    uint8_t* qsm = sm;                    // [16][D] f16, fragment-major (dec_qoff)
    uint8_t* ksm = qsm + 2 * 16 * D;      // [A1_N][D] f16, chunks swizzled (tc_off's)
    uint8_t* vsm = ksm + 2 * A1_N * D;    // the same for the values
    uint8_t* psm = vsm + 2 * A1_N * D;    // [16][A1_PLD bytes] probabilities
    float* red = (float*)(psm + 16 * A1_PLD);  // [16][D] the output, for the rounding
    const int kvh = blockIdx.y, tid = threadIdx.x, lane = tid & 31, w = tid >> 5, g = lane >> 2, tig = lane & 3;
    constexpr int CPR = D / 8;  // 16-byte chunks a row
    const int nk = pos[0] + 1;  // the step's positions: the host's, read before the wait
    const int nz = (nk + 15) & ~15;  // rows through the last 16-position block: zeros past nk
    const uint16_t* kh = k + kvh * D;
    const uint16_t* vh = v + kvh * D;
    const uint32_t ksa = (uint32_t)__cvta_generic_to_shared(ksm), vsa = (uint32_t)__cvta_generic_to_shared(vsm);
    // the rows of positions before the newest (earlier steps wrote them), and zeros past nk
    for (int e = tid; e < nz * CPR; e += 128) {
        const int r = e / CPR, c = e % CPR;
        if (r == nk - 1) continue;
        const bool ok = r < nk;
        const uint32_t o = r * (2 * D) + ((c ^ (r & 7)) << 4);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(ksa + o), "l"(kh + (i64)(ok ? r : 0) * kstride + 8 * c), "r"(ok ? 16 : 0) : "memory");
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(vsa + o), "l"(vh + (i64)(ok ? r : 0) * vstride + 8 * c), "r"(ok ? 16 : 0) : "memory");
    }
    pdl_wait();
    if (tid < CPR) {  // the newest position's rows (the RoPE kernel's)
        const int r = nk - 1, c = tid;
        const uint32_t o = r * (2 * D) + ((c ^ (r & 7)) << 4);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(ksa + o), "l"(kh + (i64)r * kstride + 8 * c) : "memory");
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(vsa + o), "l"(vh + (i64)r * vstride + 8 * c) : "memory");
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
    {  // the query tile in f16 (rows G.. zeros), as dec_attend builds it
        constexpr int QCH = 16 * CPR, QPT = QCH / 128;
        float qv[QPT][8];
#pragma unroll
        for (int u = 0; u < QPT; u++) {
            const int e = tid + 128 * u, r = e / CPR, c = e % CPR;
            const float* src = q + (i64)(kvh * G + r) * D + 8 * c;
            if (r < G) {
                const float4 a = *(const float4*)src, b = *(const float4*)(src + 4);
                qv[u][0] = a.x, qv[u][1] = a.y, qv[u][2] = a.z, qv[u][3] = a.w, qv[u][4] = b.x, qv[u][5] = b.y, qv[u][6] = b.z, qv[u][7] = b.w;
            } else {
#pragma unroll
                for (int j = 0; j < 8; j++) qv[u][j] = 0.0f;
            }
        }
#pragma unroll
        for (int u = 0; u < QPT; u++) {
            const int e = tid + 128 * u, r = e / CPR, c = e % CPR;
            uint32_t hv[4];
#pragma unroll
            for (int j = 0; j < 4; j++) hv[j] = f2h(qv[u][2 * j]) | ((uint32_t)f2h(qv[u][2 * j + 1]) << 16);
            *(uint4*)(qsm + dec_qoff(r, c)) = make_uint4(hv[0], hv[1], hv[2], hv[3]);
        }
    }
    asm volatile("cp.async.wait_all;" ::: "memory");
    __syncthreads();  // 1: the query tile and every key and value row
    // scores: warp w takes the groups of 8 positions j = w, w + 4, ...; sc[i] the i-th's
    const uint32_t qa = (uint32_t)__cvta_generic_to_shared(qsm) + 16 * lane;
    const uint32_t kx0 = (((lane >> 3) ^ (lane & 7)) << 4), kx1 = (((4 + (lane >> 3)) ^ (lane & 7)) << 4);
    constexpr int NG = A1_N / 32;  // groups a warp at most
    float sc[NG][4];
    float m0 = -INFINITY, m1 = -INFINITY;
#pragma unroll
    for (int i = 0; i < NG; i++) {
        const int j = w + 4 * i;
        if (8 * j < nk) {
            dec_scores<D>(sc[i], qa, ksa + (8 * j + (lane & 7)) * (2 * D), kx0, kx1, 8 * j - 8 * w, nk, scale);
        } else {
#pragma unroll
            for (int e = 0; e < 4; e++) sc[i][e] = -INFINITY;
        }
        m0 = fmaxf(m0, fmaxf(sc[i][0], sc[i][1])), m1 = fmaxf(m1, fmaxf(sc[i][2], sc[i][3]));
    }
    m0 = fmaxf(m0, __shfl_xor_sync(0xffffffffu, m0, 1)), m0 = fmaxf(m0, __shfl_xor_sync(0xffffffffu, m0, 2));
    m1 = fmaxf(m1, __shfl_xor_sync(0xffffffffu, m1, 1)), m1 = fmaxf(m1, __shfl_xor_sync(0xffffffffu, m1, 2));
    float s0 = 0, s1 = 0;
#pragma unroll
    for (int i = 0; i < NG; i++)
        if (m0 > -INFINITY) s0 += expf(sc[i][0] - m0) + expf(sc[i][1] - m0);
#pragma unroll
    for (int i = 0; i < NG; i++)
        if (m1 > -INFINITY) s1 += expf(sc[i][2] - m1) + expf(sc[i][3] - m1);
    s0 += __shfl_xor_sync(0xffffffffu, s0, 1), s0 += __shfl_xor_sync(0xffffffffu, s0, 2);
    s1 += __shfl_xor_sync(0xffffffffu, s1, 1), s1 += __shfl_xor_sync(0xffffffffu, s1, 2);
    if (tig == 0) stat[w][g][0] = m0, stat[w][g][1] = s0, stat[w][g + 8][0] = m1, stat[w][g + 8][1] = s1;
    __syncthreads();  // 2: the warps' statistics
    float M0 = -INFINITY, M1 = -INFINITY, L0 = 0, L1 = 0;
#pragma unroll
    for (int u = 0; u < 4; u++) M0 = fmaxf(M0, stat[u][g][0]), M1 = fmaxf(M1, stat[u][g + 8][0]);
#pragma unroll
    for (int u = 0; u < 4; u++) {
        if (stat[u][g][0] > -INFINITY) L0 += stat[u][g][1] * expf(stat[u][g][0] - M0);
        if (stat[u][g + 8][0] > -INFINITY) L1 += stat[u][g + 8][1] * expf(stat[u][g + 8][0] - M1);
    }
    const float inv0 = 1.0f / L0, inv1 = 1.0f / L1;
#pragma unroll
    for (int i = 0; i < NG; i++) {
        const int j = w + 4 * i;
        if (8 * j < nz) {  // the probabilities of positions 8j + 2 tig, + 1 (zeros past nk)
            const int col = 2 * (8 * j + 2 * tig);
            *(uint32_t*)(psm + g * A1_PLD + col) = tc_prob(sc[i][0], M0, inv0) | (tc_prob(sc[i][1], M0, inv0) << 16);
            *(uint32_t*)(psm + (g + 8) * A1_PLD + col) = tc_prob(sc[i][2], M1, inv1) | (tc_prob(sc[i][3], M1, inv1) << 16);
        }
    }
    __syncthreads();  // 3: the probabilities
    // P V: warp w takes dims 32w .. 32w + 31 (two pairs of n8 tiles) over every 16 positions
    float o[4][4];
#pragma unroll
    for (int j = 0; j < 4; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) o[j][e] = 0;
    const uint32_t pla = (uint32_t)__cvta_generic_to_shared(psm) + (lane & 15) * A1_PLD + 16 * (lane >> 4);
    const int vr = (lane & 7) + (((lane >> 3) & 1) << 3);  // the lane's row of a 16-position block
    for (int kb = 0; kb < nz / 16; kb++) {
        uint32_t pa[4];
        tc_ldsm_at(pa, pla + 32 * kb);
        const int r = 16 * kb + vr;
#pragma unroll
        for (int jj = 0; jj < 2; jj++) {
            const int ch = (D / 32) * w + 2 * jj + (lane >> 4);
            uint32_t b[4];
            tc_ldsm_t_at(b, vsa + r * (2 * D) + ((ch ^ (r & 7)) << 4));
            tc_mma(o[2 * jj], pa, b[0], b[1]);
            tc_mma(o[2 * jj + 1], pa, b[2], b[3]);
        }
    }
    // the output: rows g (heads), dims 32w + 8j + 2 tig (+1)
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const int d0 = 32 * w + 8 * j + 2 * tig;
        if (g < G) {
            *(float2*)(dst + (i64)(kvh * G + g) * D + d0) = make_float2(o[j][0], o[j][1]);
            *(float2*)(red + g * D + d0) = make_float2(o[j][0], o[j][1]);
        }
        if (g + 8 < G) {
            *(float2*)(dst + (i64)(kvh * G + g + 8) * D + d0) = make_float2(o[j][2], o[j][3]);
            *(float2*)(red + (g + 8) * D + d0) = make_float2(o[j][2], o[j][3]);
        }
    }
    if (!q8) return;
    __syncthreads();  // 4: the output, for the rounding
    for (int b = w; b < G * D / 256; b += 4) {  // a warp a 256-element block
        float vv[8];
#pragma unroll
        for (int i = 0; i < 8; i++) vv[i] = red[256 * b + 8 * lane + i];
        q8k_quant_warp(vv, q8, kvh * G * D / 256 + b, nhead * D);
    }
}

// rope_standin: rope2_set's place in the chain: the query and the new position's key and
// value rows written (copied from src), 9 blocks of 128 threads as rope2_set's grid.
__global__ void rope_standin(float* q, const float* qs, uint16_t* k, uint16_t* v, const uint16_t* ks, const int* pos, int nq,
                             int nkvd) {
    pdl();
    const int r = pos[0];
    for (int e = blockIdx.x * 128 + threadIdx.x; e < nq; e += gridDim.x * 128) q[e] = qs[e];
    for (int e = blockIdx.x * 128 + threadIdx.x; e < nkvd; e += gridDim.x * 128) k[(i64)r * nkvd + e] = ks[e], v[(i64)r * nkvd + e] = ks[nkvd + e];
}

int main() {
    const int N = getenv("N") ? atoi(getenv("N")) : 128, L = 32, nhead = 32, nkv = 8, D = 128, G = nhead / nkv;
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
    int* pos;
    CK(cudaMalloc(&pos, 4));
    const int p = N - 1;
    CK(cudaMemcpy(pos, &p, 4, cudaMemcpyHostToDevice));
    const int ns = 4, scap = (N + 63) / 64 * 64 <= 256 ? 256 : 0;
    const int dsm = dec_smem(128, false, scap, ns), asm1 = a1_smem(128);
    CK(cudaFuncSetAttribute(attention_dec128, cudaFuncAttributeMaxDynamicSharedMemorySize, dsm));
    CK(cudaFuncSetAttribute(att1<128>, cudaFuncAttributeMaxDynamicSharedMemorySize, asm1));
    const int v = getenv("V") ? atoi(getenv("V")) : -1;
    auto chain = [&](int variant) {  // 0 attention_dec128, 1 att1, 2 no attention
        for (int l = 0; l < L; l++) {
            launch(s, rope_standin, 9, 128, q[l], (const float*)qs[l], kc[l], vc[l], (const uint16_t*)ks[l], (const int*)pos, nq, nkvd);
            if (variant == 0)
                launch_smem(s, attention_dec128, dim3(1, nkv), DEC_THREADS, dsm, att[l], (i64)nq, (const float*)q[l], (i64)nq,
                            (const uint16_t*)kc[l], (i64)nkvd, (const uint16_t*)vc[l], (i64)nkvd, (const int*)pos, nhead, nkv, D, D,
                            scale, (const int*)nullptr, 0, (const int*)nullptr, 1, scap, ns, x8[l], (i64)xb, (uint8_t*)nullptr,
                            (i64)0);
            else if (variant == 1)
                launch_smem(s, att1<128>, dim3(1, nkv), 128, asm1, att[l], (const float*)q[l], (const uint16_t*)kc[l], nkvd,
                            (const uint16_t*)vc[l], nkvd, (const int*)pos, G, scale, x8[l], nhead);
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
