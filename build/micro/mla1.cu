// mla1.cu: DeepSeek-V2-Lite's batch-1 attention half as one launch (mla1.cuh), 27 layers in
// one graph with PDL edges, each followed by the engine's add_rms_norm_q8_k_1 into the
// next layer's input row (the chain's next norm), N positions (the new one at N - 1;
// default 64), GAP ns of kgap after each layer standing in for the MoE half. No chain of
// the engine's kernels here: s59's timeline has its attention half at ~19.4 us a layer
// (norm 3.0 of it), the figure to beat.
//
// Checks against a host reference of layer 0 (double sums over the same quantized
// weights; each stage from the kernel's own output of the stage before, so that an error
// is found where it starts): Q and the latent row, q_lat, v_b's outputs, O's. Prints
// WRONG and exits 2 past the bounds.
//
// nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o mla1 mla1.cu && ./mla1 && N=200 ./mla1
#include "micro.cuh"
#include "../../kernels/cuda/matmul.cu"
#include "../../kernels/cuda/quant.cu"
#include "../../kernels/cuda/ops.cu"
#include "ffnhost.cuh"
#include "mla1.cuh"
#include <cmath>
#include <cuda_fp16.h>

static float hf(uint16_t h) { return __half2float(*(__half*)&h); }
static uint16_t fh(float f) { __half h = __float2half(f); return *(uint16_t*)&h; }

// q4k_row dequantizes one Q4_K row of k values (ggml's layout: d, dmin, 12 scale bytes, 128
// quant bytes a block; chunk c's low nibbles are sub-block 2c, its high ones 2c + 1).
static void q4k_row(const uint8_t* row, int k, double* out) {
    for (int b = 0; b < k / 256; b++) {
        const uint8_t* blk = row + 144 * b;
        uint16_t d16, m16;
        memcpy(&d16, blk, 2), memcpy(&m16, blk + 2, 2);
        const double d = hf(d16), dmin = hf(m16);
        const uint8_t* s = blk + 4;
        for (int j = 0; j < 8; j++) {
            int sc, m;
            if (j < 4) sc = s[j] & 63, m = s[j + 4] & 63;
            else sc = (s[j + 4] & 0xf) | ((s[j - 4] >> 6) << 4), m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
            for (int i = 0; i < 32; i++) {
                const uint8_t q = blk[16 + 32 * (j / 2) + i];
                out[256 * b + 32 * j + i] = d * sc * ((j % 2) ? q >> 4 : q & 15) - dmin * m;
            }
        }
    }
}

// q8p_row dequantizes a planar Q8_0 row of k values (k quants, then k / 32 f16 d).
static void q8p_row(const uint8_t* row, int k, double* out) {
    for (int i = 0; i < k; i++) {
        uint16_t d;
        memcpy(&d, row + k + 2 * (i / 32), 2);
        out[i] = (double)hf(d) * (int8_t)row[i];
    }
}

// q8k rounds 256 values as q8k_quant_warp does (the first of the largest magnitudes x:
// iscale -127 / x, q = min(127, nearest(iscale v)), d = 1 / iscale).
static void q8k(const float* v, double* out) {
    int idx = 0;
    for (int i = 1; i < 256; i++)
        if (fabsf(v[i]) > fabsf(v[idx])) idx = i;
    const float a = fabsf(v[idx]);
    if (!(a > 0.0f)) {
        for (int i = 0; i < 256; i++) out[i] = 0;
        return;
    }
    const float iscale = -127.0f / v[idx], d = 1.0f / iscale;
    for (int i = 0; i < 256; i++) out[i] = (double)d * std::min(127, (int)rintf(iscale * v[i]));
}

// q8_0 rounds 32 values as mla_q8_0 does.
static void q8_0(const float* v, double* out) {
    float a = 0;
    for (int i = 0; i < 32; i++) a = fmaxf(a, fabsf(v[i]));
    const float d = a / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int i = 0; i < 32; i++) out[i] = (double)d * (int)rintf(v[i] * id);
}

template <typename T>
static std::vector<T> get(const void* d, size_t n) {
    std::vector<T> h(n);
    CK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
}

// worst returns the largest |a - b| over the largest |b|.
static double worst(const float* a, const std::vector<double>& b) {
    double w = 0, m = 0;
    for (size_t i = 0; i < b.size(); i++) w = fmax(w, fabs(a[i] - b[i])), m = fmax(m, fabs(b[i]));
    return m > 0 ? w / m : w;
}

int main() {
    const int N = getenv("N") ? atoi(getenv("N")) : 64, L = getenv("L") ? atoi(getenv("L")) : 27, gap = getenv("GAP") ? atoi(getenv("GAP")) : 0;
    if (N < 1 || N > MLA_NMAX) {
        printf("N must be 1..%d\n", MLA_NMAX);
        return 1;
    }
    const int E = MLA_E, QRS = E / 256 * 144, p = N - 1, xb = xbytes(E);
    const float theta_scale = powf(10000.0f, -2.0f / MLA_DR), scale = 1.0f / sqrtf(192.0f), eps = 1e-6f;
    const size_t bq = (size_t)MLA_NH * MLA_QH * QRS, bkv = (size_t)MLA_KV * QRS, bkb = (size_t)MLA_NH * MLA_DL * MLA_KBS,
                 bvb = (size_t)MLA_NH * 128 * 2 * 144, bo = (size_t)E * QRS, bc = (size_t)MLA_NMAX * MLA_KV * 2;
    unsigned rng = 777;
    auto next = [&]() { return rng = rng * 1664525u + 1013904223u; };
    // planar Q8_0 rows: random quants, small f16 d
    auto q8p = [&](size_t rows, int k, int stride) {
        std::vector<uint8_t> h(rows * stride, 0);
        for (size_t r = 0; r < rows; r++) {
            for (int i = 0; i < k; i++) h[r * stride + i] = (uint8_t)(next() >> 24);
            for (int b = 0; b < k / 32; b++) {
                const uint16_t d = (uint16_t)(0x1c00 + ((next() >> 16) & 0x3ff));
                memcpy(&h[r * stride + k + 2 * b], &d, 2);
            }
        }
        return h;
    };
    std::vector<uint8_t *> wq(L), wkv(L), wkb(L), wvb(L), wo(L);
    std::vector<uint16_t*> kc(L);
    std::vector<float*> kvn(L);
    const auto hkb = q8p((size_t)MLA_NH * MLA_DL, 128, MLA_KBS);
    std::vector<float> hn(MLA_DL);
    for (auto& v : hn) v = 0.5f + (float)(next() >> 8) / (float)(1 << 24);
    std::vector<uint16_t> hc((size_t)MLA_NMAX * MLA_KV);
    for (auto& v : hc) v = fh((float)(next() >> 8) / (float)(1 << 23) - 1.0f);
    for (int l = 0; l < L; l++) {
        CK(cudaMalloc(&wq[l], bq));
        CK(cudaMalloc(&wkv[l], bkv));
        CK(cudaMalloc(&wkb[l], bkb));
        CK(cudaMalloc(&wvb[l], bvb));
        CK(cudaMalloc(&wo[l], bo));
        CK(cudaMalloc(&kc[l], bc));
        CK(cudaMalloc(&kvn[l], MLA_DL * 4));
        if (l < 2) {
            fill_weights(wq[l], T_Q4_K, MLA_NH * MLA_QH, E, 21 + 5 * l);
            fill_weights(wkv[l], T_Q4_K, MLA_KV, E, 22 + 5 * l);
            fill_weights(wo[l], T_Q4_K, E, E, 23 + 5 * l);
            fill_weights(wvb[l], T_Q4_K, MLA_NH * 128, MLA_DL, 24 + 5 * l);
        } else {
            CK(cudaMemcpy(wq[l], wq[l % 2], bq, cudaMemcpyDeviceToDevice));
            CK(cudaMemcpy(wkv[l], wkv[l % 2], bkv, cudaMemcpyDeviceToDevice));
            CK(cudaMemcpy(wo[l], wo[l % 2], bo, cudaMemcpyDeviceToDevice));
            CK(cudaMemcpy(wvb[l], wvb[l % 2], bvb, cudaMemcpyDeviceToDevice));
        }
        CK(cudaMemcpy(wkb[l], hkb.data(), bkb, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(kc[l], hc.data(), bc, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(kvn[l], hn.data(), MLA_DL * 4, cudaMemcpyHostToDevice));
    }
    std::vector<uint8_t*> x8(L + 1);
    x8[0] = ffn_input(E);
    for (int l = 1; l <= L; l++) CK(cudaMalloc(&x8[l], xb));
    std::vector<float *> qg(L), kvg(L), qlg(L), vbg(L), dst(L);
    for (int l = 0; l < L; l++) {
        CK(cudaMalloc(&qg[l], MLA_NH * MLA_QH * 4));
        CK(cudaMalloc(&kvg[l], MLA_KV * 4));
        CK(cudaMalloc(&qlg[l], MLA_NH * MLA_DL * 4));
        CK(cudaMalloc(&vbg[l], MLA_NH * 128 * 4));
        CK(cudaMalloc(&dst[l], E * 4));
    }
    float *P, *resid, *resid0, *normed, *nw;
    CK(cudaMalloc(&P, 8 * E * 4));
    for (float** b : {&resid, &resid0, &normed, &nw}) CK(cudaMalloc(b, E * 4));
    std::vector<float> hr(E, 0.0f), hw(E, 1.0f);
    CK(cudaMemcpy(resid0, hr.data(), E * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(nw, hw.data(), E * 4, cudaMemcpyHostToDevice));
    int* pos;
    CK(cudaMalloc(&pos, 4));
    CK(cudaMemcpy(pos, &p, 4, cudaMemcpyHostToDevice));
    unsigned *cnt, *out;
    CK(cudaMalloc(&cnt, 64 * 4));
    CK(cudaMemset(cnt, 0, 64 * 4));
    CK(cudaMalloc(&out, 1 << 20));
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    CK(cudaDeviceSynchronize());
    auto layers = [&](bool norm) {
        for (int l = 0; l < L; l++) {
            launch(s, mla1, 128, 256, (const uint8_t*)x8[l], (const uint8_t*)wq[l], (const uint8_t*)wkv[l], (const float*)kvn[l],
                   (const uint8_t*)wkb[l], (const uint8_t*)wvb[l], (const uint8_t*)wo[l], kc[l], (const int*)pos, theta_scale, scale, eps,
                   qg[l], kvg[l], qlg[l], vbg[l], P, dst[l], cnt);
            if (norm)
                launch(s, add_rms_norm_q8_k_1, 1, 256, resid, (const float*)resid, (const float*)dst[l], normed, (const float*)nw, E,
                       1e-5f, x8[l + 1]);
            if (gap) launch(s, kgap, 1, 32, out, gap);
        }
    };
    CK(cudaMemcpy(resid, resid0, E * 4, cudaMemcpyDeviceToDevice));
    layers(true);
    CK(cudaStreamSynchronize(s));

    // the host's reference of layer 0, stage by stage
    const auto hx = get<uint8_t>(x8[0], xb);
    std::vector<double> x(E);
    for (int j = 0; j < E; j++) {
        float d;
        memcpy(&d, &hx[E + 4 * (j / 256)], 4);
        x[j] = (double)d * (int8_t)hx[j];
    }
    const auto hq = get<uint8_t>(wq[0], bq), hkv = get<uint8_t>(wkv[0], bkv), ho = get<uint8_t>(wo[0], bo), hvb = get<uint8_t>(wvb[0], bvb);
    const auto gq = get<float>(qg[0], MLA_NH * MLA_QH), gkv = get<float>(kvg[0], MLA_KV), gql = get<float>(qlg[0], MLA_NH * MLA_DL),
               gvb = get<float>(vbg[0], MLA_NH * 128), gd = get<float>(dst[0], E);
    std::vector<double> row(E), rq(MLA_NH * MLA_QH), rkv(MLA_KV);
    for (int i = 0; i < MLA_NH * MLA_QH + MLA_KV; i++) {
        const bool isq = i < MLA_NH * MLA_QH;
        q4k_row((isq ? hq.data() + (size_t)i * QRS : hkv.data() + (size_t)(i - MLA_NH * MLA_QH) * QRS), E, row.data());
        double a = 0;
        for (int j = 0; j < E; j++) a += row[j] * x[j];
        (isq ? rq[i] : rkv[i - MLA_NH * MLA_QH]) = a;
    }
    // from the kernel's Q and latent rows: the norm, the rotations, q_nope in Q8_0, q_lat
    double ss = 0;
    for (int j = 0; j < MLA_DL; j++) ss += (double)gkv[j] * gkv[j];
    const float sc = (float)(1.0 / sqrt(ss / MLA_DL + (double)eps));
    std::vector<float> lat(MLA_KV), qpe(MLA_NH * MLA_DR);
    for (int j = 0; j < MLA_DL; j++) lat[j] = hf(fh(gkv[j] * sc * hn[j]));
    auto rot = [&](const float* x2, float* y, bool f16) {
        float theta = (float)p;
        for (int k = 0; k < MLA_DR / 2; k++) {
            if (k > 0) theta = theta * theta_scale;
            const float co = (float)cos((double)theta), sn = (float)sin((double)theta);
            const float y0 = x2[2 * k] * co - x2[2 * k + 1] * sn, y1 = x2[2 * k] * sn + x2[2 * k + 1] * co;
            y[2 * k] = f16 ? hf(fh(y0)) : y0, y[2 * k + 1] = f16 ? hf(fh(y1)) : y1;
        }
    };
    rot(&gkv[MLA_DL], &lat[MLA_DL], true);
    std::vector<double> rql(MLA_NH * MLA_DL), qn(128), dq(MLA_DL);
    for (int h = 0; h < MLA_NH; h++) {
        rot(&gq[h * MLA_QH + 128], &qpe[h * MLA_DR], false);
        for (int b = 0; b < 4; b++) q8_0(&gq[h * MLA_QH + 32 * b], &qn[32 * b]);
        for (int j = 0; j < MLA_DL; j++) {
            q8p_row(hkb.data() + ((size_t)h * MLA_DL + j) * MLA_KBS, 128, dq.data());
            double a = 0;
            for (int i = 0; i < 128; i++) a += dq[i] * qn[i];
            rql[h * MLA_DL + j] = a;
        }
    }
    // from the kernel's q_lat: the attention (the cache's rows, the new one as the kernel
    // rounds it), o_lat in Q8_K, v_b
    std::vector<double> rvb(MLA_NH * 128), sco(N), ol(MLA_DL), ol8(MLA_DL);
    std::vector<float> olf(MLA_DL);
    for (int h = 0; h < MLA_NH; h++) {
        double m = -1e300;
        for (int t = 0; t < N; t++) {
            double a = 0;
            for (int d = 0; d < MLA_KV; d++) {
                const double kv = t == p ? lat[d] : hf(hc[(size_t)t * MLA_KV + d]);
                a += (d < MLA_DL ? gql[h * MLA_DL + d] : qpe[h * MLA_DR + d - MLA_DL]) * kv;
            }
            sco[t] = a * scale, m = fmax(m, sco[t]);
        }
        double l = 0;
        for (int t = 0; t < N; t++) sco[t] = exp(sco[t] - m), l += sco[t];
        for (int d = 0; d < MLA_DL; d++) {
            double a = 0;
            for (int t = 0; t < N; t++) a += sco[t] * (t == p ? lat[d] : hf(hc[(size_t)t * MLA_KV + d]));
            olf[d] = (float)(a / l);
        }
        for (int b = 0; b < MLA_DL / 256; b++) q8k(&olf[256 * b], &ol8[256 * b]);
        for (int i = 0; i < 128; i++) {
            q4k_row(hvb.data() + ((size_t)h * 128 + i) * 2 * 144, MLA_DL, dq.data());
            double a = 0;
            for (int j = 0; j < MLA_DL; j++) a += dq[j] * ol8[j];
            rvb[h * 128 + i] = a;
        }
    }
    // from the kernel's v_b outputs (unrounded here): O
    std::vector<double> rd(E);
    for (int i = 0; i < E; i++) {
        q4k_row(ho.data() + (size_t)i * QRS, E, row.data());
        double a = 0;
        for (int j = 0; j < E; j++) a += row[j] * gvb[j];
        rd[i] = a;
    }
    const double wq0 = worst(gq.data(), rq), wkv0 = worst(gkv.data(), rkv), wql = worst(gql.data(), rql), wv = worst(gvb.data(), rvb),
                 wd = worst(gd.data(), rd);
    const bool bad = wq0 > 1e-4 || wkv0 > 1e-4 || wql > 1e-4 || wv > 2e-2 || wd > 2e-2;
    printf("mla1, N %d, layer 0 against the host (largest difference over the largest value): Q %.2g, latent row %.2g, q_lat %.2g, "
           "v_b %.2g, O %.2g%s\n",
           N, wq0, wkv0, wql, wv, wd, bad ? "  WRONG" : "");
    for (int round = 0; round < 2; round++) {
        const float tn = graph_best_ms(s, [&]() { layers(true); }, 2, 5), t1 = graph_best_ms(s, [&]() { layers(false); }, 2, 5);
        printf("N %d, gap %d ns, %d layers, us a layer: mla1 and the norm %.2f, mla1 alone %.2f (the engine's chain: ~19.4 with its "
               "norm, s59)\n",
               N, gap, L, 1e3 * tn / L, 1e3 * t1 / L);
    }
    return bad ? 2 : 0;
}
