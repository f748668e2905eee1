// ffnhost.cuh: what the FFN micros (ffn.cu, ffs.cu) share on the host: a layer's row
// bytes, a Q8_K row's bytes, random weights, the layers and the input row. Include after
// matmul.cu and quant.cu (their types and quant_q8_k).
#pragma once
#include <cstring>
#include <vector>

static int rowbytes(int t, int K) { return t == T_Q4_K ? K / 256 * 144 : t == T_Q8_0 ? K / 32 * 34 : K / 256 * 210; }
static int xbytes(int K) { return ((Q8K_BSUMS(K) + 4 * (K / 16)) + 15) & ~15; }

// fill_weights writes random quants with small, finite f16 scales (Q4_K: d, dmin at the
// start of each 144-byte block; Q6_K and Q8_0 in mv1's row layouts: the d plane at 208 nb
// and at 32 nb).
static void fill_weights(uint8_t* dev, int t, int M, int K, unsigned seed) {
    const int ws = rowbytes(t, K), nb = t == T_Q8_0 ? K / 32 : K / 256;
    std::vector<uint8_t> h((size_t)M * ws);
    unsigned s = seed;
    for (auto& b : h) s = s * 1664525u + 1013904223u, b = (uint8_t)(s >> 24);
    for (int r = 0; r < M; r++) {
        uint8_t* row = h.data() + (size_t)r * ws;
        for (int b = 0; b < nb; b++) {
            s = s * 1664525u + 1013904223u;
            const uint16_t d = (uint16_t)(0x1800 + ((s >> 16) & 0x3ff)), m = (uint16_t)(0x1400 + ((s >> 6) & 0x3ff));
            if (t == T_Q4_K) memcpy(row + 144 * b, &d, 2), memcpy(row + 144 * b + 2, &m, 2);
            else memcpy(row + (t == T_Q8_0 ? 32 : 208) * nb + 2 * b, &d, 2);
        }
    }
    CK(cudaMemcpy(dev, h.data(), h.size(), cudaMemcpyHostToDevice));
}

// FfnLayer is one layer's FFN weights (gate and up Q4_K [F][E], down [E][F]) and down's
// output twice (the chain's, the fused kernel's).
struct FfnLayer {
    uint8_t *gate, *up, *down;
    int dtype;
    float *dc, *df;
};

// ffn_layers makes L layers of E and F, down Q6_K on even layers and Q4_K on odd ones
// (llama.cpp's Q4_K_M mixes them), the first two random, the others the same bytes in
// buffers of their own, and returns their weights' bytes.
static size_t ffn_layers(std::vector<FfnLayer>& ly, int E, int F) {
    const int gws = rowbytes(T_Q4_K, E);
    size_t bytes = 0;
    for (size_t l = 0; l < ly.size(); l++) {
        FfnLayer& y = ly[l];
        y.dtype = l % 2 ? T_Q4_K : T_Q6_K;
        const size_t db = (size_t)E * rowbytes(y.dtype, F);
        CK(cudaMalloc(&y.gate, (size_t)F * gws));
        CK(cudaMalloc(&y.up, (size_t)F * gws));
        CK(cudaMalloc(&y.down, db));
        if (l < 2) {
            fill_weights(y.gate, T_Q4_K, F, E, 1 + 3 * l);
            fill_weights(y.up, T_Q4_K, F, E, 2 + 3 * l);
            fill_weights(y.down, y.dtype, E, F, 3 + 3 * l);
        } else {
            CK(cudaMemcpy(y.gate, ly[l % 2].gate, (size_t)F * gws, cudaMemcpyDeviceToDevice));
            CK(cudaMemcpy(y.up, ly[l % 2].up, (size_t)F * gws, cudaMemcpyDeviceToDevice));
            CK(cudaMemcpy(y.down, ly[l % 2].down, db, cudaMemcpyDeviceToDevice));
        }
        CK(cudaMalloc(&y.dc, E * 4));
        CK(cudaMalloc(&y.df, E * 4));
        bytes += 2 * (size_t)F * gws + db;
    }
    return bytes;
}

// ffn_input returns a row of E values rounded to Q8_K by the engine's kernel.
static uint8_t* ffn_input(int E) {
    float* xf;
    uint8_t* x;
    CK(cudaMalloc(&xf, E * 4));
    CK(cudaMalloc(&x, xbytes(E)));
    std::vector<float> hx(E);
    for (int j = 0; j < E; j++) hx[j] = (float)((j * 7919) % 2001 - 1000) / 400.0f;
    CK(cudaMemcpy(xf, hx.data(), E * 4, cudaMemcpyHostToDevice));
    quant_q8_k<<<dim3((E / 256 + Q8KW_WARPS - 1) / Q8KW_WARPS, 1), 32 * Q8KW_WARPS>>>(x, 0, xf, E);
    return x;
}

// FfnRun is what the FFN micros' main functions share: L layers of E x F (L and GAP from
// the environment), the input row, the gate/up/SwiGLU outputs and Q8_K rows of the chain
// (c) and of the fused kernel (f), the partial sums of ncl clusters and cs counters, a
// stream; chain() queues the engine's chain for every layer (mmv_multi of gate and up,
// swiglu_q8_k, the down product, then GAP ns of kgap). Include after micro.cuh.
struct FfnRun {
    int L, gap, E, F, gws, xn4, xnf;
    std::vector<FfnLayer> ly;
    size_t bytes;
    uint8_t *x, *x14c, *x14f;
    float *gc, *uc, *gf, *uf, *P;
    unsigned *cnt, *out;
    cudaStream_t s;
    FfnRun(int e, int f, int ncl, int cs)
        : L(getenv("L") ? atoi(getenv("L")) : 32), gap(getenv("GAP") ? atoi(getenv("GAP")) : 0), E(e), F(f), gws(rowbytes(T_Q4_K, e)),
          xn4(xbytes(e)), xnf(xbytes(f)), ly(L) {
        bytes = ffn_layers(ly, E, F);
        x = ffn_input(E);
        CK(cudaMalloc(&x14c, xnf));
        CK(cudaMalloc(&x14f, xnf));
        for (float** q : {&gc, &uc, &gf, &uf}) CK(cudaMalloc(q, (size_t)F * 4));
        CK(cudaMalloc(&P, (size_t)ncl * E * 4));
        CK(cudaMalloc(&cnt, cs * 4));
        CK(cudaMemset(cnt, 0, cs * 4));
        CK(cudaMalloc(&out, 1 << 20));
        CK(cudaDeviceSynchronize());
        CK(cudaStreamCreate(&s));
    }
    // down_diff returns the largest |chain - fused| of down's outputs over layers 0, 1 and
    // L - 1, and the largest |chain| (for a relative bound).
    void down_diff(double* worst, double* amax) const {
        *worst = 0, *amax = 0;
        for (int l : {0, 1, L - 1}) {
            std::vector<float> A(E), B(E);
            CK(cudaMemcpy(A.data(), ly[l].dc, (size_t)E * 4, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(B.data(), ly[l].df, (size_t)E * 4, cudaMemcpyDeviceToHost));
            for (int j = 0; j < E; j++) *worst = fmax(*worst, fabs((double)A[j] - B[j])), *amax = fmax(*amax, fabs((double)A[j]));
        }
    }
    void chain() const {
        for (int l = 0; l < L; l++) {
            const FfnLayer& y = ly[l];
            const int nrb = 2 * (F / 16);
            launch_smem(s, mmv_multi, nrb, 128, xn4, (const uint8_t*)x, (i64)0, E, (const uint8_t*)y.gate, (i64)gws, gc, F, T_Q4_K,
                        (const uint8_t*)y.up, (i64)gws, uc, F, T_Q4_K, (const uint8_t*)nullptr, (i64)0, (float*)nullptr, 0, T_Q4_K);
            launch(s, swiglu_q8_k, dim3((F / 256 + Q8KW_WARPS - 1) / Q8KW_WARPS, 1), 32 * Q8KW_WARPS, gc, (const float*)gc,
                   (const float*)uc, F, x14c, (i64)0, (uint16_t*)nullptr, (i64)0);
            const int drows = y.dtype == T_Q4_K ? 4 * Q4K_R1 : 4 * Q6K_R1;
            launch_smem(s, y.dtype == T_Q4_K ? mmv_q4_k_1 : mmv_q6_k_1, E / drows, 128, xnf, (const uint8_t*)y.down,
                        (i64)rowbytes(y.dtype, F), (const uint8_t*)x14c, (i64)0, y.dc, (i64)0, E, F, 1);
            if (gap) launch(s, kgap, 1, 32, out, gap);
        }
    }
};
