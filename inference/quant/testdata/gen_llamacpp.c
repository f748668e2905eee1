// gen_llamacpp.c writes llamacpp_ref.bin: reference outputs of llama.cpp's own ggml
// (quantize_row_*_ref, dequantize_row_*, ggml_vec_dot_*_generic, ggml_fp32_to_fp16/bf16)
// for inputs made by a tiny deterministic generator that llamacpp_test.go mirrors
// (refGen), so the inputs need not be stored. Record format: see llamacpp_test.go.
//
// It links against the prebuilt shared libraries of the npm package
// @node-llama-cpp/linux-x64@3.21.1: libggml-base.so (the reference quantizers) and
// libggml-cpu-x64.so (the baseline x86-64 CPU build, whose *_generic kernels are the
// scalar code; neither library contains FMA instructions, so no contraction). To refresh:
//
//	mkdir -p /tmp/nlc && cd /tmp/nlc && npm init -y && npm i -E @node-llama-cpp/linux-x64@3.21.1
//	L=/tmp/nlc/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64
//	gcc -O2 -o /tmp/gen gen_llamacpp.c -L$L -l:libggml-base.so -l:libggml-cpu-x64.so -Wl,-rpath,$L
//	/tmp/gen llamacpp_ref.bin && gzip -9 -f llamacpp_ref.bin
//
// (about 20 s: it also hashes the conversions of all 2^32 float32 values.)
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef void (*qfn)(const float *, void *, int64_t);
typedef void (*dqfn)(const void *, float *, int64_t);
typedef void (*dotfn)(int, float *, size_t, const void *, size_t, const void *, size_t, int);

#define DECLQ(t) void quantize_row_##t##_ref(const float *, void *, int64_t);
#define DECLD(t) void dequantize_row_##t(const void *, float *, int64_t);
DECLQ(q4_0) DECLQ(q4_1) DECLQ(q5_0) DECLQ(q5_1) DECLQ(q8_0) DECLQ(q8_1)
DECLQ(q2_K) DECLQ(q3_K) DECLQ(q4_K) DECLQ(q5_K) DECLQ(q6_K) DECLQ(q8_K)
DECLD(q4_0) DECLD(q4_1) DECLD(q5_0) DECLD(q5_1) DECLD(q8_0)
DECLD(q2_K) DECLD(q3_K) DECLD(q4_K) DECLD(q5_K) DECLD(q6_K) DECLD(q8_K)
#define DECLDOT(a) void ggml_vec_dot_##a##_generic(int, float *, size_t, const void *, size_t, const void *, size_t, int);
DECLDOT(q4_0_q8_0) DECLDOT(q4_1_q8_1) DECLDOT(q5_0_q8_0) DECLDOT(q5_1_q8_1) DECLDOT(q8_0_q8_0)
DECLDOT(q2_K_q8_K) DECLDOT(q3_K_q8_K) DECLDOT(q4_K_q8_K) DECLDOT(q5_K_q8_K) DECLDOT(q6_K_q8_K)
void ggml_vec_dot_f32(int, float *, size_t, const float *, size_t, const float *, size_t, int);
void ggml_vec_dot_f16(int, float *, size_t, const uint16_t *, size_t, const uint16_t *, size_t, int);
void ggml_vec_dot_bf16(int, float *, size_t, const uint16_t *, size_t, const uint16_t *, size_t, int);
uint16_t ggml_fp32_to_fp16(float);
float ggml_fp16_to_fp32(uint16_t);
uint16_t ggml_fp32_to_bf16(float);
void ggml_cpu_init(void);

// ---- generator (mirrored in Go) ----
static uint64_t st;
static uint64_t next64(void) {
    uint64_t z = (st += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static float unif(void) { return (float)(next64() >> 40) * (1.0f / 16777216.0f); } // [0,1), exact
static float gauss(void) {
    float a = unif() + unif();
    float b = unif() + unif();
    return ((a + b) - 2.0f) * 1.7320508f;
}
// gen fills x[n] with distribution dist for blocks of bs elements.
static void gen(float *x, int n, int dist, int bs, uint64_t seed) {
    st = seed;
    for (int i = 0; i < n; i++) {
        float v;
        switch (dist) {
        case 0: v = gauss() * 0.02f; break;
        case 1: v = unif() * 2.0f - 1.0f; break;
        case 2: v = gauss() * 0.02f; if (i % 97 == 13) v *= 50.0f; break;
        case 3: v = unif() * 3.0f; break;
        case 4: v = gauss() - 1.5f; break;
        case 5: v = gauss() * 1e-6f; break;
        case 6: v = gauss() * 3000.0f; break;
        default: {
            int k = (i / bs) % 4, j = i % bs;
            float g = gauss();
            if (k == 0) v = 0.0f;
            else if (k == 1) v = 0.37f;
            else if (k == 2) v = (j == 5) ? 100.0f : g * 0.01f;
            else v = (j % 7 == 0) ? g : 0.0f;
        }
        }
        x[i] = v;
    }
}

static FILE *out;
static void w32(uint32_t v) { fwrite(&v, 4, 1, out); }
static void wbytes(const void *p, size_t n) { w32((uint32_t)n); fwrite(p, 1, n, out); }

struct qt { uint32_t id; int bs; int ts; qfn q; dqfn dq; };
static struct qt qts[] = {
    {2, 32, 18, (qfn)quantize_row_q4_0_ref, (dqfn)dequantize_row_q4_0},
    {3, 32, 20, (qfn)quantize_row_q4_1_ref, (dqfn)dequantize_row_q4_1},
    {6, 32, 22, (qfn)quantize_row_q5_0_ref, (dqfn)dequantize_row_q5_0},
    {7, 32, 24, (qfn)quantize_row_q5_1_ref, (dqfn)dequantize_row_q5_1},
    {8, 32, 34, (qfn)quantize_row_q8_0_ref, (dqfn)dequantize_row_q8_0},
    {9, 32, 36, (qfn)quantize_row_q8_1_ref, NULL},
    {10, 256, 84, (qfn)quantize_row_q2_K_ref, (dqfn)dequantize_row_q2_K},
    {11, 256, 110, (qfn)quantize_row_q3_K_ref, (dqfn)dequantize_row_q3_K},
    {12, 256, 144, (qfn)quantize_row_q4_K_ref, (dqfn)dequantize_row_q4_K},
    {13, 256, 176, (qfn)quantize_row_q5_K_ref, (dqfn)dequantize_row_q5_K},
    {14, 256, 210, (qfn)quantize_row_q6_K_ref, (dqfn)dequantize_row_q6_K},
    {15, 256, 292, (qfn)quantize_row_q8_K_ref, (dqfn)dequantize_row_q8_K},
};
static struct qt *find(uint32_t id) { for (size_t i = 0; i < sizeof qts / sizeof qts[0]; i++) if (qts[i].id == id) return &qts[i]; return NULL; }

struct dt { uint32_t id, vid; dotfn f; };
static struct dt dts[] = {
    {2, 8, (dotfn)ggml_vec_dot_q4_0_q8_0_generic}, {3, 9, (dotfn)ggml_vec_dot_q4_1_q8_1_generic},
    {6, 8, (dotfn)ggml_vec_dot_q5_0_q8_0_generic}, {7, 9, (dotfn)ggml_vec_dot_q5_1_q8_1_generic},
    {8, 8, (dotfn)ggml_vec_dot_q8_0_q8_0_generic},
    {10, 15, (dotfn)ggml_vec_dot_q2_K_q8_K_generic}, {11, 15, (dotfn)ggml_vec_dot_q3_K_q8_K_generic},
    {12, 15, (dotfn)ggml_vec_dot_q4_K_q8_K_generic}, {13, 15, (dotfn)ggml_vec_dot_q5_K_q8_K_generic},
    {14, 15, (dotfn)ggml_vec_dot_q6_K_q8_K_generic},
};

int main(int argc, char **argv) {
    ggml_cpu_init();
    out = fopen(argv[1], "wb");
    fwrite("EMBQGOLD", 1, 8, out); w32(1);
    static float x[4096], y[4096], z[4096];
    static uint8_t qb[8192], qx[8192];
    // kind 1: quantize + dequantize. input = gen(n, dist, bs, seed = 1000*id + dist)
    for (size_t t = 0; t < sizeof qts / sizeof qts[0]; t++) {
        struct qt *q = &qts[t];
        for (int dist = 0; dist < 8; dist++) {
            int n = (dist == 7 ? 4 : (q->bs == 256 ? 2 : 8)) * q->bs;
            if (dist == 7 && q->bs == 32) n = 16 * 32;
            uint64_t seed = 1000ull * q->id + dist;
            gen(x, n, dist, q->bs, seed);
            memset(qb, 0xAA, sizeof qb);
            q->q(x, qb, n);
            int nbytes = n / q->bs * q->ts;
            w32(1); w32(q->id); w32(n); w32(dist); w32((uint32_t)seed);
            wbytes(qb, nbytes);
            if (q->dq) { q->dq(qb, y, n); wbytes(y, 4 * n); } else { w32(0); }
        }
    }
    // kind 2: dot. w = quant(gen(n, dist, seed 7000+...)), x = vecdot-quant(gen(n, dist2, seed))
    for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++) {
        struct qt *qw = find(dts[t].id), *qv = find(dts[t].vid);
        for (int c = 0; c < 3; c++) {
            int nb = c == 0 ? 1 : (c == 1 ? 3 : 7);
            int n = nb * qw->bs;
            if (qw->bs == 32) n *= 8;
            gen(x, n, c == 2 ? 2 : 0, qw->bs, 7000 + 10 * dts[t].id + c);
            gen(z, n, c == 1 ? 4 : 1, qw->bs, 8000 + 10 * dts[t].id + c);
            qw->q(x, qb, n);
            qv->q(z, qx, n);
            float s = 0;
            dts[t].f(n, &s, 0, qb, 0, qx, 0, 1);
            w32(2); w32(dts[t].id); w32(n);
            wbytes(qb, n / qw->bs * qw->ts);
            wbytes(qx, n / qv->bs * qv->ts);
            fwrite(&s, 4, 1, out);
        }
    }
    // kind 2 for f32/f16/bf16: raw rows from gen
    for (int k = 0; k < 3; k++) {
        int n = 1000;
        gen(x, n, 0, 32, 9000 + k); gen(z, n, 1, 32, 9100 + k);
        float s = 0;
        uint16_t hx[1000], hz[1000];
        w32(2);
        if (k == 0) { w32(0); w32(n); wbytes(x, 4 * n); wbytes(z, 4 * n); ggml_vec_dot_f32(n, &s, 0, x, 0, z, 0, 1); }
        if (k == 1) { for (int i = 0; i < n; i++) { hx[i] = ggml_fp32_to_fp16(x[i]); hz[i] = ggml_fp32_to_fp16(z[i]); }
                      w32(1); w32(n); wbytes(hx, 2 * n); wbytes(hz, 2 * n); ggml_vec_dot_f16(n, &s, 0, hx, 0, hz, 0, 1); }
        if (k == 2) { for (int i = 0; i < n; i++) { hx[i] = ggml_fp32_to_bf16(x[i]); hz[i] = ggml_fp32_to_bf16(z[i]); }
                      w32(30); w32(n); wbytes(hx, 2 * n); wbytes(hz, 2 * n); ggml_vec_dot_bf16(n, &s, 0, hx, 0, hz, 0, 1); }
        fwrite(&s, 4, 1, out);
    }
    // kind 3: fp16/bf16 of float32 bit patterns i*262139 (mod 2^32), i < 16384, plus
    // FNV-1a 64 hashes of the conversions of all 2^32 patterns and of all 65536 halves widened.
    w32(3); w32(16384);
    for (uint32_t i = 0; i < 16384; i++) {
        uint32_t b = i * 262139u; float f; memcpy(&f, &b, 4);
        uint16_t h = ggml_fp32_to_fp16(f), g = ggml_fp32_to_bf16(f);
        fwrite(&h, 2, 1, out); fwrite(&g, 2, 1, out);
    }
    uint64_t h16 = 0xcbf29ce484222325ull, hb16 = 0xcbf29ce484222325ull, hw = 0xcbf29ce484222325ull;
    for (uint64_t i = 0; i < (1ull << 32); i++) {
        uint32_t b = (uint32_t)i; float f; memcpy(&f, &b, 4);
        uint16_t h = ggml_fp32_to_fp16(f), g = ggml_fp32_to_bf16(f);
        h16 = (h16 ^ h) * 0x100000001b3ull; h16 ^= h16 >> 32;
        hb16 = (hb16 ^ g) * 0x100000001b3ull; hb16 ^= hb16 >> 32;
    }
    for (uint32_t i = 0; i < 65536; i++) {
        float f = ggml_fp16_to_fp32((uint16_t)i); uint32_t b; memcpy(&b, &f, 4);
        hw = (hw ^ b) * 0x100000001b3ull; hw ^= hw >> 32;
    }
    fwrite(&h16, 8, 1, out); fwrite(&hb16, 8, 1, out); fwrite(&hw, 8, 1, out);
    w32(0);
    fclose(out);
    fprintf(stderr, "h16=%016llx hb16=%016llx hw=%016llx\n", (unsigned long long)h16, (unsigned long long)hb16, (unsigned long long)hw);
    return 0;
}
