// shortattn.cu: the latent attention (attention_short576w / attention_short576) alone,
// outside a decode step's chain. (Session 65.) In the chain its scoring pass takes ~3.2 us
// at position 125 whatever was tried (512 threads, the query in registers, no branch a
// chunk, the next kernel launched after it), ~25 ns a position where its issue and
// shared-memory counts allow ~9: is that the kernel, or its neighbours in the chain?
//
// One token's 16 head rows over n positions of a paged latent cache (pages of 16 rows,
// shuffled), the query random, the output rounded to Q8_K as in a V2-Lite step (fused,
// ocol 64), laid out as inference/backend/cuda/attention_short.go launches it (nmax 256:
// a tile of 160 positions, so past 160 the kernel takes two tiles). Each figure is the
// best of 5 replays of a graph of NL launches, per launch, in three chains:
//   alone:  the attention after itself (PDL edges, as in a step)
//   after:  each attention after a streaming kernel (kstream, 132 blocks, 4 MB from HBM,
//           another region each launch: a product's tail), less that kernel's own chain
//           time
//   gap:    the same after kgap (an empty kernel), less kgap's
// The slope between n = 13 and n = 126 is the cost a position; "out" hashes the
// outputs of one more launch at that n (a variant with the same bits prints the same).
// Build with the kernel sources of a variant first on the include path (-I DIR, e.g. a
// patched copy of kernels/cuda):
//
// nvcc -gencode arch=compute_90a,code=sm_90a -O3 -fmad=false -I ../../kernels/cuda \
//      -o /tmp/shortattn shortattn.cu && /tmp/shortattn
#include "micro.cuh"
#include "attention_short.cu"

#include <vector>

#define NL 2048
#define MLA 576
#define PAGE 16
#define NREG 64  // kstream's regions of 4 MB: 256 MB, so each launch reads from HBM

struct Setup {
    float *q, *dst;
    uint16_t* k;
    int *pos, *seq, *table;
    uint8_t* q8;
    int heads = 16, nmax = 256, cap = 160;
};

// smem is attention_short.go's shortSmem for MLA's rows on threads threads.
static int smem(int threads, int cap, int scap) {
    const int ng = threads / (MLA / 8);
    return cap * 2 * MLA + 4 * (MLA + scap + ng * MLA);
}

template <typename K>
static void attn(cudaStream_t s, K kern, int threads, const Setup& u) {
    const float scale = 0.0625f;
    launch_smem(s, kern, dim3(u.heads, 1), threads, smem(threads, u.cap, u.nmax), u.dst, (i64)512, (const float*)u.q,
                (i64)MLA, (const uint16_t*)u.k, (i64)MLA, (const uint16_t*)u.k, (i64)MLA, (const int*)u.pos, 1, 1, MLA,
                MLA, scale, (const int*)u.table, u.nmax / PAGE, (const int*)u.seq, PAGE, u.cap, u.nmax, 1, 64, u.q8,
                (i64)1024);
}

static float chain(cudaStream_t s, int mode, bool wide, const Setup& u, const uint4* w, size_t n16, unsigned* out) {
    auto body = [&]() {
        for (int i = 0; i < NL; i++) {
            if (mode == 1) launch(s, kstream, dim3(132), 256, w + (i % NREG) * n16, n16, out);
            if (mode == 2) launch(s, kgap, dim3(132), 256, out, 0);
            if (mode != 3 && mode != 4) {
                if (wide) attn(s, attention_short576w, 512, u);
                else attn(s, attention_short576, 256, u);
            }
            if (mode == 3) launch(s, kstream, dim3(132), 256, w + (i % NREG) * n16, n16, out);
            if (mode == 4) launch(s, kgap, dim3(132), 256, out, 0);
        }
    };
    return graph_best_ms(s, body, 1, 5) * 1000.0f / NL;
}

// outputs runs the attention once more and hashes its outputs (FNV-1a over dst's floats
// and the Q8_K rows' bytes), so that a variant's bits can be compared with the tree's.
static uint64_t outputs(cudaStream_t s, bool wide, const Setup& u) {
    CK(cudaMemset(u.dst, 0, 16 * 512 * 4));
    CK(cudaMemset(u.q8, 0, 16 * 1024));
    if (wide) attn(s, attention_short576w, 512, u);
    else attn(s, attention_short576, 256, u);
    CK(cudaStreamSynchronize(s));
    std::vector<uint8_t> b(16 * 512 * 4 + 16 * 1024);
    CK(cudaMemcpy(b.data(), u.dst, 16 * 512 * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(b.data() + 16 * 512 * 4, u.q8, 16 * 1024, cudaMemcpyDeviceToHost));
    uint64_t h = 1469598103934665603ull;
    for (uint8_t c : b) h = (h ^ c) * 1099511628211ull;
    return h;
}

int main() {
    Setup u;
    const int rows = 4096;  // cache rows: pages of 16
    std::vector<uint16_t> hk((size_t)rows * MLA);
    uint32_t x = 12345;
    auto rnd = [&]() { x = x * 1664525u + 1013904223u; return ((x >> 8) & 0xffff) / 65536.0f * 2 - 1; };
    for (auto& v : hk) {
        const __half h = __float2half(rnd());
        v = *(const uint16_t*)&h;
    }
    std::vector<float> hq(16 * MLA);
    for (auto& v : hq) v = rnd();
    std::vector<int> ht(u.nmax / PAGE);
    for (int i = 0; i < (int)ht.size(); i++) ht[i] = (i * 37 + 11) % (rows / PAGE);  // shuffled pages
    CK(cudaMalloc(&u.k, hk.size() * 2));
    CK(cudaMemcpy(u.k, hk.data(), hk.size() * 2, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&u.q, hq.size() * 4));
    CK(cudaMemcpy(u.q, hq.data(), hq.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&u.table, ht.size() * 4));
    CK(cudaMemcpy(u.table, ht.data(), ht.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&u.dst, 16 * 512 * 4));
    CK(cudaMalloc(&u.q8, 16 * 1024));
    CK(cudaMalloc(&u.pos, 16 * 4));
    CK(cudaMalloc(&u.seq, 16 * 4));
    CK(cudaMemset(u.seq, 0, 16 * 4));
    const size_t wbytes = 4 << 20;
    uint4* w;
    unsigned* out;
    CK(cudaMalloc(&w, wbytes * NREG));
    CK(cudaMemset(w, 1, wbytes * NREG));
    CK(cudaMalloc(&out, 132 * 256 * 4));
    for (auto k : {(const void*)attention_short576w, (const void*)attention_short576})
        CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem(512, u.cap, u.nmax)));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const float tstream = chain(s, 3, true, u, w, wbytes / 16, out), tgap = chain(s, 4, true, u, w, wbytes / 16, out);
    printf("kstream alone %.2f us a launch, kgap alone %.2f\n", tstream, tgap);
    const int ns[] = {1, 13, 32, 64, 96, 126, 160, 200, 250};
    for (int wide = 1; wide >= 0; wide--) {
        printf("attention_short576%s (us a launch; after and gap less the other kernel's own time)\n", wide ? "w" : "");
        float t13[3] = {0, 0, 0}, t126[3] = {0, 0, 0};
        for (int n : ns) {
            std::vector<int> hp(16, n - 1);
            CK(cudaMemcpy(u.pos, hp.data(), 16 * 4, cudaMemcpyHostToDevice));
            float t[3];
            for (int m = 0; m < 3; m++) t[m] = chain(s, m, wide, u, w, wbytes / 16, out) - (m == 1 ? tstream : m == 2 ? tgap : 0);
            printf("  n %3d: alone %6.2f  after %6.2f  gap %6.2f  out %016llx\n", n, t[0], t[1], t[2],
                   (unsigned long long)outputs(s, wide, u));
            for (int m = 0; m < 3; m++) {
                if (n == 13) t13[m] = t[m];
                if (n == 126) t126[m] = t[m];
            }
        }
        printf("  slope n 13 -> 126 (ns a position): alone %.1f  after %.1f  gap %.1f\n", (t126[0] - t13[0]) * 1000 / 113,
               (t126[1] - t13[1]) * 1000 / 113, (t126[2] - t13[2]) * 1000 / 113);
    }
    CK(cudaDeviceSynchronize());
    return 0;
}
