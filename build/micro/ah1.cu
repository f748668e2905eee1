// ah1.cu: Llama-3.1-8B's batch-1 attention half, 32 layers in one graph with PDL edges,
// as the engine's chain runs it (mmv_multi of Q/K/V, rope2_set, attention_dec128_1_<cap>,
// mmv_q4_k_1 of O, then add_rms_norm_q8_k_1 into the next layer's row) and with the first
// four as one launch (ah1.cuh: ah1_8, 128 blocks; ah1_16, 256), then the same norm. V is
// Q6_K in every layer (more bytes than Q4_K_M's mix); caches F16, paged in blocks of 16
// rows in a shuffled order; N positions (the new one at N - 1; N <= 256; default 64, a
// tg128's middle). GAP ns of kgap after each layer stand in for the FFN half.
//
// Checks (layer 0, one pass of each from the same state): the rotated query and the new
// cache rows bit for bit (ah1 sums the rows as mv1 does and rotates as rope2_set does);
// the attention's outputs and O's within a printed bound (another softmax and P V
// order, and O's partials added per head pair). Then the best of 5 graph replays.
//
// nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o ah1 ah1.cu && ./ah1 && N=128 ./ah1 && GAP=8000 ./ah1
#include "micro.cuh"
#include "../../kernels/cuda/attention_dec.cu"
#include "../../kernels/cuda/matmul.cu"
#include "../../kernels/cuda/quant.cu"
#include "../../kernels/cuda/ops.cu"
#include "ffnhost.cuh"
#include "ah1.cuh"
#include <cmath>

static double maxdiff(const float* a, const float* b, int n, double* amax) {
    double w = 0;
    *amax = 0;
    for (int i = 0; i < n; i++) w = fmax(w, fabs((double)a[i] - b[i])), *amax = fmax(*amax, fabs((double)a[i]));
    return w;
}

int main() {
    const int N = getenv("N") ? atoi(getenv("N")) : 64, L = getenv("L") ? atoi(getenv("L")) : 32, gap = getenv("GAP") ? atoi(getenv("GAP")) : 0;
    const int E = AH_E, nkvd = 1024, nhead = 32, nkv = 8, D = AH_HD;
    if (N < 1 || N > AH_NMAX) {
        printf("N must be 1..%d\n", AH_NMAX);
        return 1;
    }
    const int ws4 = rowbytes(T_Q4_K, E), ws6 = rowbytes(T_Q6_K, E), xb = xbytes(E);
    const float scale = 1.0f / sqrtf((float)D), theta_scale = powf(500000.0f, -2.0f / D);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    // weights: two random layers, the others copies in buffers of their own
    std::vector<uint8_t*> wq(L), wk(L), wv(L), wo(L);
    size_t wbytes = 0;
    for (int l = 0; l < L; l++) {
        const size_t bq = (size_t)E * ws4, bk = (size_t)nkvd * ws4, bv = (size_t)nkvd * ws6;
        CK(cudaMalloc(&wq[l], bq));
        CK(cudaMalloc(&wk[l], bk));
        CK(cudaMalloc(&wv[l], bv));
        CK(cudaMalloc(&wo[l], bq));
        if (l < 2) {
            fill_weights(wq[l], T_Q4_K, E, E, 11 + 4 * l);
            fill_weights(wk[l], T_Q4_K, nkvd, E, 12 + 4 * l);
            fill_weights(wv[l], T_Q6_K, nkvd, E, 13 + 4 * l);
            fill_weights(wo[l], T_Q4_K, E, E, 14 + 4 * l);
        } else {
            CK(cudaMemcpy(wq[l], wq[l % 2], bq, cudaMemcpyDeviceToDevice));
            CK(cudaMemcpy(wk[l], wk[l % 2], bk, cudaMemcpyDeviceToDevice));
            CK(cudaMemcpy(wv[l], wv[l % 2], bv, cudaMemcpyDeviceToDevice));
            CK(cudaMemcpy(wo[l], wo[l % 2], bq, cudaMemcpyDeviceToDevice));
        }
        wbytes += 2 * bq + bk + bv;
    }
    // caches (one pair a variant, the same old rows), the paged table, the position
    unsigned rng = 12345;
    auto rnd = [&]() { rng = rng * 1664525u + 1013904223u; return (float)((rng >> 8) & 0xffff) / 32768.0f - 1.0f; };
    auto f2hh = [](float f) { __half h = __float2half(f); return *(uint16_t*)&h; };
    const size_t crows = AH_NMAX, cb = crows * nkvd * 2;
    std::vector<uint16_t*> kcc(L), vcc(L), kcf(L), vcf(L);
    std::vector<uint16_t> hc(crows * nkvd);
    for (int l = 0; l < L; l++) {
        for (uint16_t** c : {&kcc[l], &vcc[l], &kcf[l], &vcf[l]}) CK(cudaMalloc(c, cb));
        for (auto& x : hc) x = f2hh(rnd());
        CK(cudaMemcpy(kcc[l], hc.data(), cb, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(kcf[l], hc.data(), cb, cudaMemcpyHostToDevice));
        for (auto& x : hc) x = f2hh(rnd());
        CK(cudaMemcpy(vcc[l], hc.data(), cb, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(vcf[l], hc.data(), cb, cudaMemcpyHostToDevice));
    }
    std::vector<int> perm(AH_NMAX / 16);
    for (int b = 0; b < (int)perm.size(); b++) perm[b] = b;
    for (int b = (int)perm.size() - 1; b > 0; b--) std::swap(perm[b], perm[rng % (b + 1)]), rng = rng * 1664525u + 1013904223u;
    const int p = N - 1, cr = perm[p / 16] * 16 + p % 16, tcols = (int)perm.size();
    int *pos, *tab, *seq, *rows;
    CK(cudaMalloc(&pos, 4));
    CK(cudaMemcpy(pos, &p, 4, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&rows, 4));
    CK(cudaMemcpy(rows, &cr, 4, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&tab, perm.size() * 4));
    CK(cudaMemcpy(tab, perm.data(), perm.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&seq, 4));
    CK(cudaMemset(seq, 0, 4));
    // activations: layer l's input row x8[l] (x8[0] fixed; the norm writes x8[l + 1]),
    // the chain's Q/K/V, attention and O rows, the fused kernel's, the residual row
    std::vector<uint8_t*> x8(L + 1);
    x8[0] = ffn_input(E);
    for (int l = 1; l <= L; l++) CK(cudaMalloc(&x8[l], xb));
    std::vector<float *> qc(L), kf(L), vf(L), attc(L), oc(L), qf(L), attf(L), of(L);
    for (int l = 0; l < L; l++) {
        for (float** b : {&qc[l], &attc[l], &oc[l], &qf[l], &attf[l], &of[l]}) CK(cudaMalloc(b, E * 4));
        CK(cudaMalloc(&kf[l], nkvd * 4));
        CK(cudaMalloc(&vf[l], nkvd * 4));
    }
    uint8_t* xa;
    CK(cudaMalloc(&xa, xb));
    float *resid, *resid0, *normed, *nw, *P;
    for (float** b : {&resid, &resid0, &normed, &nw}) CK(cudaMalloc(b, E * 4));
    std::vector<float> hr(E), hw(E);
    for (int j = 0; j < E; j++) hr[j] = rnd(), hw[j] = 1.0f + 0.25f * rnd();
    CK(cudaMemcpy(resid0, hr.data(), E * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(nw, hw.data(), E * 4, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&P, 16 * E * 4));
    unsigned *flags, *cnt, *out;
    CK(cudaMalloc(&flags, 16 * 4));  // ah1_8's eight, then ah1_16's (a count's launches must all be of one form)
    CK(cudaMemset(flags, 0, 16 * 4));
    CK(cudaMalloc(&cnt, 16 * 4));
    CK(cudaMemset(cnt, 0, 16 * 4));
    unsigned* cnt2;  // ah1_8f's: the row ranges' last blocks
    CK(cudaMalloc(&cnt2, 4));
    CK(cudaMemset(cnt2, 0, 4));
    CK(cudaMalloc(&out, 1 << 20));
    // the chain's attention: attention_decD_1's form for N positions, as att1.cu launches it
    const int ns = 4, scap = 256, cap1 = N <= 64 ? 64 : N <= 128 ? 128 : A1_N;
    auto att1 = cap1 == 64 ? attention_dec128_1_64 : cap1 == 128 ? attention_dec128_1_128 : attention_dec128_1;
    const int asm1 = a1_smem(128, cap1);
    CK(cudaFuncSetAttribute(att1, cudaFuncAttributeMaxDynamicSharedMemorySize, asm1));
    CK(cudaDeviceSynchronize());

    auto norm = [&](int l, float* o) {
        launch(s, add_rms_norm_q8_k_1, 1, 256, resid, (const float*)resid, (const float*)o, normed, (const float*)nw, E, 1e-5f, x8[l + 1]);
        if (gap) launch(s, kgap, 1, 32, out, gap);
    };
    auto chain = [&]() {
        for (int l = 0; l < L; l++) {
            launch_smem(s, mmv_multi, E / 16 + nkvd / 16 + nkvd / 8, 128, xb, (const uint8_t*)x8[l], (i64)0, E, (const uint8_t*)wq[l],
                        (i64)ws4, qc[l], E, T_Q4_K, (const uint8_t*)wk[l], (i64)ws4, kf[l], nkvd, T_Q4_K, (const uint8_t*)wv[l], (i64)ws6,
                        vf[l], nkvd, T_Q6_K);
            launch_smem(s, rope2_set, dim3(1, nhead / 4 + nkv / 4 + 4), 128, 4 * D, qc[l], E, nhead / 4, kf[l], nkvd, 4, (const int*)pos, D,
                        D, 0, theta_scale, 1.0f, (const float*)nullptr, 0.0f, 0.0f, 0.0f, 1.0f, (uint8_t*)kcc[l], 1, (const int*)rows,
                        (uint8_t*)vcc[l], 1, (const float*)vf[l], nkvd, 4);
            launch_smem(s, att1, dim3(1, nkv), 128, asm1, attc[l], (i64)E, (const float*)qc[l], (i64)E, (const uint16_t*)kcc[l], (i64)nkvd,
                        (const uint16_t*)vcc[l], (i64)nkvd, (const int*)pos, nhead, nkv, D, D, scale, (const int*)tab, tcols, (const int*)seq,
                        16, scap, ns, xa, (i64)xb, (uint8_t*)nullptr, (i64)0);
            launch_smem(s, mmv_q4_k_1, E / 16, 128, xb, (const uint8_t*)wo[l], (i64)ws4, (const uint8_t*)xa, (i64)0, oc[l], (i64)0, E, E, 1);
            norm(l, oc[l]);
        }
    };
    // ah1_8c's clusters of 16 (a non-portable size): how many fit at once (0: the form is
    // left out)
    int ncl = 0;
    {
        CK(cudaFuncSetAttribute(ah1_8c, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        cudaLaunchConfig_t c = {};
        c.gridDim = 128, c.blockDim = 256;
        cudaLaunchAttribute at;
        at.id = cudaLaunchAttributeClusterDimension;
        at.val.clusterDim.x = 16, at.val.clusterDim.y = 1, at.val.clusterDim.z = 1;
        c.attrs = &at, c.numAttrs = 1;
        if (cudaOccupancyMaxActiveClusters(&ncl, ah1_8c, &c) != cudaSuccess) ncl = 0, (void)cudaGetLastError();
        printf("ah1_8c: %d clusters of 16 fit at once (8 needed)\n", ncl);
    }
    // fused(8): ah1_8, (16) ah1_16, (0) ah1_8n, (-2) ah1_8c, each then the norm; (-1) ah1_8f,
    // the norm in it
    auto fused = [&](int nb) {
        for (int l = 0; l < L; l++) {
            if (nb == -2) {
                launch_cl(s, ah1_8c, 128, 256, 0, 16, (const uint8_t*)x8[l], (const uint8_t*)wq[l], (const uint8_t*)wk[l],
                          (const uint8_t*)wv[l], (const uint8_t*)wo[l], qf[l], kcf[l], vcf[l], (const int*)pos, (const int*)tab, theta_scale,
                          scale, attf[l], P, of[l], flags, cnt);
                norm(l, of[l]);
                continue;
            }
            if (nb == -1) {
                launch(s, ah1_8f, 128, 256, (const uint8_t*)x8[l], (const uint8_t*)wq[l], (const uint8_t*)wk[l], (const uint8_t*)wv[l],
                       (const uint8_t*)wo[l], qf[l], kcf[l], vcf[l], (const int*)pos, (const int*)tab, theta_scale, scale, attf[l], P, of[l],
                       flags, cnt, AhNorm{resid, normed, nw, x8[l + 1], cnt2, 1e-5f});
                if (gap) launch(s, kgap, 1, 32, out, gap);
                continue;
            }
            launch(s, nb == 8 ? ah1_8 : nb == 16 ? ah1_16 : ah1_8n, 16 * (nb == 16 ? 16 : 8), 256, (const uint8_t*)x8[l], (const uint8_t*)wq[l], (const uint8_t*)wk[l],
                   (const uint8_t*)wv[l], (const uint8_t*)wo[l], qf[l], kcf[l], vcf[l], (const int*)pos, (const int*)tab, theta_scale, scale,
                   attf[l], P, of[l], nb == 16 ? flags + 8 : flags, cnt);
            norm(l, of[l]);
        }
    };
    auto reset = [&]() { CK(cudaMemcpy(resid, resid0, E * 4, cudaMemcpyDeviceToDevice)); };
    auto get = [&](const void* d, size_t n) {
        std::vector<float> h(n / 4);
        CK(cudaMemcpy(h.data(), d, n, cudaMemcpyDeviceToHost));
        return h;
    };
    bool bad = false;
    for (int nb : {8, 16, -2}) {
        if (nb == -2 && ncl < 1) continue;
        reset();
        chain();
        CK(cudaStreamSynchronize(s));
        reset();
        fused(nb);
        CK(cudaStreamSynchronize(s));
        const auto q1 = get(qc[0], E * 4), q2 = get(qf[0], E * 4);
        int qd = 0;
        for (int j = 0; j < E; j++) qd += memcmp(&q1[j], &q2[j], 4) != 0;
        std::vector<uint16_t> c1(2 * nkvd), c2(2 * nkvd);
        CK(cudaMemcpy(c1.data(), kcc[0] + (size_t)cr * nkvd, nkvd * 2, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(c1.data() + nkvd, vcc[0] + (size_t)cr * nkvd, nkvd * 2, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(c2.data(), kcf[0] + (size_t)cr * nkvd, nkvd * 2, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(c2.data() + nkvd, vcf[0] + (size_t)cr * nkvd, nkvd * 2, cudaMemcpyDeviceToHost));
        int cd = 0;
        for (int j = 0; j < 2 * nkvd; j++) cd += c1[j] != c2[j];
        double am, om, om2;
        const auto a1 = get(attc[0], E * 4), a2 = get(attf[0], E * 4), o1 = get(oc[0], E * 4), o2 = get(of[0], E * 4);
        const auto o3 = get(oc[L - 1], E * 4), o4 = get(of[L - 1], E * 4);
        const double ad = maxdiff(a1.data(), a2.data(), E, &am), od = maxdiff(o1.data(), o2.data(), E, &om),
                     od2 = maxdiff(o3.data(), o4.data(), E, &om2);
        const bool wrong = qd || cd || ad > 1e-2 * am || od > 2e-2 * om;
        bad |= wrong;
        printf("ah1_%s, N %d, layer 0: rotated query floats differing %d of %d, new cache halves %d of %d; attention %.3g of %.3g, "
               "O %.3g of %.3g; layer %d's O %.3g of %.3g%s\n",
               nb == 8 ? "8" : nb == 16 ? "16" : "8c", N, qd, E, cd, 2 * nkvd, ad, am, od, om, L - 1, od2, om2, wrong ? "  WRONG" : "");
    }
    {  // ah1_8f against ah1_8 and the norm: the last layer's next row and the residual, bit for bit
        reset();
        fused(8);
        CK(cudaStreamSynchronize(s));
        const auto x1 = get(x8[L], xb), r1 = get(resid, E * 4);
        reset();
        fused(-1);
        CK(cudaStreamSynchronize(s));
        const auto x2 = get(x8[L], xb), r2 = get(resid, E * 4);
        const bool same = memcmp(x1.data(), x2.data(), xb) == 0 && memcmp(r1.data(), r2.data(), E * 4) == 0;
        bad |= !same;
        printf("ah1_8f: the norm in the launch gives %s\n", same ? "the same rows as ah1_8 and add_rms_norm_q8_k_1" : "other rows  WRONG");
    }
    // two rounds, the forms in turn; ah1_8n (fused(0)) is ah1_8 without the attention
    for (int round = 0; round < 2; round++) {
        const float tc = graph_best_ms(s, chain, 2, 5), t8 = graph_best_ms(s, [&]() { fused(8); }, 2, 5),
                    t16 = graph_best_ms(s, [&]() { fused(16); }, 2, 5), tn = graph_best_ms(s, [&]() { fused(0); }, 2, 5),
                    tf = graph_best_ms(s, [&]() { fused(-1); }, 2, 5), tcl = ncl > 0 ? graph_best_ms(s, [&]() { fused(-2); }, 2, 5) : 0;
        printf("N %d, gap %d ns, %d layers (%.1f MB of weights a layer), us a layer: chain %.2f, ah1_8 %.2f, ah1_16 %.2f, "
               "ah1_8 without attention %.2f, ah1_8f (the norm in it) %.2f, ah1_8c (clusters) %.2f\n",
               N, gap, L, wbytes / 1e6 / L, 1e3 * tc / L, 1e3 * t8 / L, 1e3 * t16 / L, 1e3 * tn / L, 1e3 * tf / L, 1e3 * tcl / L);
    }
    return bad ? 2 : 0;
}
