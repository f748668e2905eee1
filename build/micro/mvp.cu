// mvp.cu: does one persistent kernel stream a batch-1 decode step's weights faster than
// the engine's chain of mat-vec kernels? The products of a Llama-3.1-8B Q4_K_M step (32
// layers: Q/K/V, O, gate/up, down; then the Q6_K output head; kernels/cuda/matmul.cu's
// mv1, included as it is) four ways, with the same bits:
//
//   chain       the engine's launches (mmv_multi, mmv_q4_k_1, mmv_q6_k_1, and
//               add_rms_norm_q8_k at the norms; kgap's GAP ns at the attention and SwiGLU
//               places) in one graph with PDL edges: each kernel's first weight loads come
//               before its wait, but only on blocks already resident when the kernel
//               before ends, and every boundary drains and refills the SMs.
//   persistent  one cooperative launch of as many blocks as are resident; the products
//               in groups of one activation row ({Q,K,V}, {O}, {gate,up}, {down}, head),
//               each group's row blocks taken grid-stride; a block arrives at a counter
//               after its share of a group, and the last to arrive releases the next
//               group after the serial small kernel a real step runs there: at the two
//               norms of a layer (after O, after down) and before the head the real one
//               (the residual add, RMSNorm and Q8_K rounding of add_rms_norm_q8_k, with
//               its bits, by the one block), at the others (attention after Q/K/V,
//               SwiGLU after gate/up) GAP ns of spinning. Before waiting for the release
//               a block asks L2 for its first row block of the next group
//               (cp.async.bulk.prefetch.L2), so the weights keep streaming across the
//               boundary (PF=0: no prefetch).
//   ring        mvr.cuh: one block an SM whose producer warp streams every product's
//               weights, in step order, into a ring of shared-memory stages (S x SB
//               bytes; FULL=1 whole rows a stage, NOCOMP=1 consumers that only touch it;
//               REPACK=1 K-chunked stages from repacked copies, one bulk copy a stage).
// NONORM=1 puts GAP ns where the norms run (chain and ring), to split their cost out;
// NOCOMP=2 leaves the ring's activation rows out as well.
// SHARED=1 (session 41) points every product but the head at one 48 MB buffer, so the
// weights mostly come from L2; PFB="blocks:MiB:KiB,..." (session 41) times only the
// chain, alone and beside pfr.cuh's L2 prefetcher at each setting (blocks, window,
// chunk). Session 41 on the H200: from L2 the chain takes 1.40 ms (NORM=5), 1.21 without
// norms; the prefetcher changes nothing.
//   stream      the same bytes read by mk.cu's plain kernel, one launch a product (the
//               bound a chain reaches).
// NORM picks where the chain's norms run (mvn.cuh; NORM=7 and 8: mvc.cuh, session 48;
// NORM=9: mvg.cuh's group tails in the products before, session 91; NORM=11, built with
// -DMVX: mvx.cuh's counted producers and waiting consumers, build/wip/s91-call3.sh;
// NORM=12: mvl.cuh's local tails, and its grouped dots (form 13), session 104).
// Session 33 on the H200 (NOTES.md):
// chain 1.75 ms, persistent 3.3-3.8, ring 2.5-2.8 (2.0 with no arithmetic), stream 1.41;
// the one-row norm kernel (NORM=5) 1.68.
//
// Session 23's mk.cu asked the same of plain streaming kernels and found the persistent
// form no faster (a grid barrier costs what a PDL boundary does), and an L2 prefetch
// during a gap never shortened the product after it; it left a megakernel only where it
// overlaps work that a boundary cannot. What this adds: the engine's mat-vecs and norms
// (not streams), the next group's weights asked for before the wait, and a single
// barrier whose last block runs the serial op. Expect little; run it once to close the
// question. Session 20 read the step (EMBER_CUDA_SKIP): the mat-vecs alone ~563 tok/s,
// the whole step ~465; session 30 (build/wip/mv1-gs.patch's mvb.cu): the chain 1.487 ms
// against 1.377 streaming. 600 tok/s is 1.67 ms for everything. The norms make the
// Q/K/V and gate/up activation row (x4) a real dependency: both ways compute the same
// bits, which the run checks.
//
// nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o mvp mvp.cu && ./mvp && GAP=1500 ./mvp
#include "micro.cuh"
#ifdef MVX  // s91-call3.sh: kernels/cuda copied to /tmp/kc, its pdl_wait calling mvx_wait (mvx.cuh)
#include "/tmp/kc/matmul.cu"
#include "/tmp/kc/quant.cu"
#else
#include "../../kernels/cuda/matmul.cu"
#include "../../kernels/cuda/quant.cu"
#endif
#include <cstring>
#include <vector>

struct Prod {
    const uint8_t* w;
    i64 ws;
    const uint8_t* x;
    float* d;
    int M, K, T, nrb;
    const uint8_t* rp;  // mvr's repacked copy (REPACK=1), else null
};
struct Group {
    int p0, np, nrb;  // products p0 .. p0 + np - 1, their row blocks in all
    const float* a;   // with a: after the group, the norm of a + r (NormArgs), else GAP
};
struct NormArgs {  // add_rms_norm_q8_k's: r = a + r, dst = RMSNorm(r) * w, x = dst in Q8_K
    float *r, *dst;
    const float* w;
    uint8_t* x;
    int cols;
    float eps;
};

#include "mvn.cuh"
#include "mvc.cuh"
#include "mvg.cuh"
#include "mvl.cuh"
#ifdef MVX
#include "mvx.cuh"
#endif
typedef void (*LgFn)(const uint8_t*, i64, const uint8_t*, float*, int, int, GroupArgs);
typedef void (*GuFn)(const uint8_t*, const uint8_t*, i64, const uint8_t*, float*, float*, int, int, GuArgs);
template <int T, bool TAIL>
static LgFn mvg_lg1(int sy) {
    return sy == 1 ? mv1_lg<T, TAIL, 1> : sy == 2 ? mv1_lg<T, TAIL, 2> : sy == 3 ? mv1_lg<T, TAIL, 3> : sy == 4 ? mv1_lg<T, TAIL, 4>
         : sy == 5 ? mv1_lg<T, TAIL, 5> : mv1_lg<T, TAIL, 6>;
}
static LgFn mvg_lg(int t, bool tail, int sy) {
    return t == T_Q4_K ? (tail ? mvg_lg1<T_Q4_K, true>(sy) : mvg_lg1<T_Q4_K, false>(sy))
                       : (tail ? mvg_lg1<T_Q6_K, true>(sy) : mvg_lg1<T_Q6_K, false>(sy));
}
template <bool TAIL>
static GuFn mvg_gu1(int sy) {
    return sy == 1 ? mv1_gu<TAIL, 1> : sy == 2 ? mv1_gu<TAIL, 2> : sy == 3 ? mv1_gu<TAIL, 3> : sy == 4 ? mv1_gu<TAIL, 4>
         : sy == 5 ? mv1_gu<TAIL, 5> : mv1_gu<TAIL, 6>;
}
static GuFn mvg_gu(bool tail, int sy) { return tail ? mvg_gu1<true>(sy) : mvg_gu1<false>(sy); }

// mvp_find: row block u of group g as its product and the product's row block.
__device__ __forceinline__ const Prod* mvp_find(const Prod* P, const Group& g, int u, int* b) {
    int j = g.p0;
    while (u >= P[j].nrb) u -= P[j].nrb, j++;
    *b = u;
    return P + j;
}

// mvp: bar[0] counts arrivals (a group's are gridDim.x), bar[1] is the groups released.
#ifndef MVP_MINB
#define MVP_MINB 2  // blocks an SM for the register cap: 249 registers at 2 (nvcc 12.4), spills at 3
                    // (the engine's mmv_multi: 166 registers, three an SM)
#endif
__global__ void __launch_bounds__(128, MVP_MINB) mvp(const Prod* P, const Group* G, int ng, unsigned* bar, int pf, int gap,
                                                    NormArgs na) {
    __shared__ int last;
#pragma unroll 1
    for (int g = 0; g < ng; g++) {
        const Group gr = G[g];
        if (pf && (int)blockIdx.x < gr.nrb) {  // this block's first row block of the group, into L2
            int b;
            const Prod* p = mvp_find(P, gr, blockIdx.x, &b);
            const int rows = p->T == T_Q4_K ? 4 * Q4K_R1 : 4 * Q6K_R1, r = b * rows + (int)threadIdx.x;
            if ((int)threadIdx.x < rows && r < p->M)
                asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p->w + (i64)r * p->ws), "r"((int)p->ws) : "memory");
        }
        if (g > 0) {
            if (threadIdx.x == 0)
                while (ld_acquire(bar + 1) < (unsigned)g) {
                }
            __syncthreads();
        }
#pragma unroll 1
        for (int u = blockIdx.x; u < gr.nrb; u += gridDim.x) {
            int b;
            const Prod* p = mvp_find(P, gr, u, &b);
            if (p->T == T_Q4_K)
                mv1<T_Q4_K, true>(p->w, p->ws, p->x, p->d, p->M, p->K, b);
            else
                mv1<T_Q6_K, true>(p->w, p->ws, p->x, p->d, p->M, p->K, b);
        }
        __threadfence();  // each thread's outputs of the group, before the arrival
        __syncthreads();
        if (threadIdx.x == 0) {
            last = atomicAdd(bar, 1) + 1 == (unsigned)(g + 1) * gridDim.x;  // the last to arrive
            __threadfence();
        }
        __syncthreads();
        if (last) {  // the serial op between this group and the next, then the release
            if (gr.a) {
                float wv[4][8];
                mvn_weights<128>(na.w, na.cols, wv);
                mvn_norm<128>(gr.a, na, wv);
                __threadfence();  // each thread's writes, before the release
            }
            else if (gap && threadIdx.x == 0)
                spin(gap);
            __syncthreads();
            if (threadIdx.x == 0) {
                __threadfence();
                atomicExch(bar + 1, (unsigned)(g + 1));
            }
        }
    }
}

#include "mvr.cuh"
#include "pfr.cuh"

static int rows_of(int t) { return t == T_Q4_K ? 4 * Q4K_R1 : 4 * Q6K_R1; }  // mv1_rows, on the host
static int rowbytes(int t, int K) { return t == T_Q4_K ? K / 256 * 144 : K / 256 * 210; }
static int xbytes(int K) { return ((Q8K_BSUMS(K) + 4 * (K / 16)) + 15) & ~15; }  // mv1_bytes for Q8_K rows

int main() {
    cudaDeviceProp pr;
    CK(cudaGetDeviceProperties(&pr, 0));
    const int sms = pr.multiProcessorCount, layers = 32;
    const int gap = getenv("GAP") ? atoi(getenv("GAP")) : 0, pf = getenv("PF") ? atoi(getenv("PF")) : 1;
    std::vector<Prod> prods;  // per layer: Q, K, V, O, gate, up, down; then the head
    std::vector<Group> groups;
    uint8_t *x4, *x14;
    CK(cudaMalloc(&x4, xbytes(4096)));
    CK(cudaMalloc(&x14, xbytes(14336)));
    CK(cudaMemset(x4, 1, xbytes(4096)));
    CK(cudaMemset(x14, 1, xbytes(14336)));
    size_t bytes = 0;
    // SHARED=1 (session 41): every product but the head reads one 48 MB buffer (one), so
    // its bytes mostly come from L2: the chain's time with HBM nearly out of it. NONORM=1:
    // GAP in the norms' places too.
    const bool shared = getenv("SHARED") && atoi(getenv("SHARED")), nonorm = getenv("NONORM") && atoi(getenv("NONORM"));
    uint8_t* one = nullptr;
    auto add = [&](int t, int M, int K) {
        Prod p{nullptr, rowbytes(t, K), K == 4096 ? x4 : x14, nullptr, M, K, t, (M + rows_of(t) - 1) / rows_of(t)};
        const size_t n = (size_t)M * p.ws;
        uint8_t* w;
        if (shared && n <= (48u << 20)) {
            if (!one) {
                CK(cudaMalloc(&one, 48u << 20));
                CK(cudaMemset(one, 0x11, 48u << 20));
            }
            w = one;
        } else {
            CK(cudaMalloc(&w, n));
            CK(cudaMemset(w, 0x11, n));  // f16 scales 0x1111: small and finite
        }
        CK(cudaMalloc(&p.d, (size_t)M * 4));
        p.w = w;
        bytes += n;
        prods.push_back(p);
    };
    auto group = [&](int np, bool norm = false) {  // norm: the add + RMSNorm of the last product's rows after it
        Group g{(int)prods.size() - np, np, 0, norm && !nonorm ? prods.back().d : nullptr};
        for (int j = g.p0; j < g.p0 + np; j++) g.nrb += prods[j].nrb;
        groups.push_back(g);
    };
    for (int l = 0; l < layers; l++) {
        add(T_Q4_K, 4096, 4096), add(T_Q4_K, 1024, 4096), add(T_Q6_K, 1024, 4096), group(3);
        add(T_Q4_K, 4096, 4096), group(1, true);
        add(T_Q4_K, 14336, 4096), add(T_Q4_K, 14336, 4096), group(2);
        add(l % 2 ? T_Q4_K : T_Q6_K, 4096, 14336), group(1, true);  // llama.cpp's Q4_K_M mixes them
    }
    add(T_Q6_K, 128256, 4096), group(1);
    Prod* dP;
    Group* dG;
    unsigned *bar, *out;
    CK(cudaMalloc(&dP, prods.size() * sizeof(Prod)));
    CK(cudaMalloc(&dG, groups.size() * sizeof(Group)));
    CK(cudaMemcpy(dP, prods.data(), prods.size() * sizeof(Prod), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dG, groups.data(), groups.size() * sizeof(Group), cudaMemcpyHostToDevice));
    CK(cudaMalloc(&bar, 8));
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    // the norms' residual row, output and weights; the residual and x4 start from these
    // host copies in each run
    NormArgs na{nullptr, nullptr, nullptr, x4, 4096, 1e-5f};
    std::vector<float> hr(4096), hw(4096);
    for (int j = 0; j < 4096; j++) hr[j] = (float)((j * 37) % 101 - 50) / 25.0f, hw[j] = 1.0f + (float)(j % 7) / 16.0f;
    std::vector<uint8_t> hx(xbytes(4096), 1);
    float *r, *dst, *nw;
    CK(cudaMalloc(&r, 4096 * 4));
    CK(cudaMalloc(&dst, 4096 * 4));
    CK(cudaMalloc(&nw, 4096 * 4));
    CK(cudaMemcpy(nw, hw.data(), 4096 * 4, cudaMemcpyHostToDevice));
    na.r = r, na.dst = dst, na.w = nw;
    auto reset = [&]() {
        CK(cudaMemcpyAsync(r, hr.data(), 4096 * 4, cudaMemcpyHostToDevice, s));
        CK(cudaMemcpyAsync(x4, hx.data(), hx.size(), cudaMemcpyHostToDevice, s));
    };
    CK(cudaMalloc(&out, 1 << 24));
    const int smem = xbytes(14336);
    CK(cudaFuncSetAttribute(mvp, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int occ;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, mvp, 128, smem));
    const int bps = getenv("BPS") ? std::min(atoi(getenv("BPS")), occ) : occ, grid = bps * sms;
    printf("%.2f GB of weights; persistent: %d blocks (%d an SM of %d resident), prefetch %d, gap %d ns\n", bytes / 1e9, grid, bps,
           occ, pf, gap);

    int norm = getenv("NORM") ? atoi(getenv("NORM")) : 0;
    float* r2;  // NORM=7: the residual's second buffer (mvc.cuh writes it out of place)
    CK(cudaMalloc(&r2, 4096 * 4));
    unsigned* cnt;
    CK(cudaMalloc(&cnt, 4));
    CK(cudaMemset(cnt, 0, 4));
    GroupArgs gargs{r, nw, nullptr, nullptr, nullptr, 4096};  // NORM=9, 10 (mvg.cuh)
    CK(cudaMalloc(&gargs.xn, xbytes(4096)));
    CK(cudaMalloc(&gargs.parts, 16 * 8));
    CK(cudaMalloc(&gargs.cnt, 16 * 4));
    CK(cudaMemset(gargs.cnt, 0, 16 * 4));
    int sy = 1;  // mvg.cuh's arrive form
    int sw = 0;  // SW forms (mvg.cuh): 1 swiglu_q8_k after gate/up, 2 mv1_gu, 3 mv1_gu without tails
    GuArgs guargs{nullptr, x14, nullptr, 14336};
    CK(cudaMalloc(&guargs.dst, 14336 * 4));
    CK(cudaMalloc(&guargs.cnt, 56 * 4));
    CK(cudaMemset(guargs.cnt, 0, 56 * 4));
    auto chain = [&]() {  // the engine's launches (NORM: mvn.cuh's variants)
        int nk = 0;  // NORM=7: the norms so far (the residual alternates r, r2)
        for (size_t gi = 0; gi < groups.size(); gi++) {
            const Group& g = groups[gi];
            const Prod* p = &prods[g.p0];
            if (norm == 7 && gi > 0 && groups[gi - 1].a) {  // mvc.cuh: the norm in this product's clusters
                MvcNorm nm{groups[gi - 1].a, nk % 2 ? r2 : r, nw, nk % 2 ? r : r2, dst, x4, 4096, na.eps};
                nk++;
                const Prod* b = g.np > 1 ? p + 1 : nullptr;
                const Prod* c = g.np > 2 ? p + 2 : nullptr;
                launch_cluster(s, mvc_multi, g.nrb, 128, xbytes(4096), p->K, p[0].w, p[0].ws, p[0].d, p[0].M, p[0].T,
                               b ? b->w : nullptr, b ? b->ws : (i64)0, b ? b->d : nullptr, b ? b->M : 0, b ? b->T : T_Q4_K,
                               c ? c->w : nullptr, c ? c->ws : (i64)0, c ? c->d : nullptr, c ? c->M : 0, c ? c->T : T_Q4_K, nm);
            } else if (norm == 8) {  // no norm; every product launched as mmv_multi in clusters (the launch's cost)
                const Prod* b = g.np > 1 ? p + 1 : nullptr;
                const Prod* c = g.np > 2 ? p + 2 : nullptr;  // else a one-row stand-in, so that padding blocks stay in bounds
                launch_cluster(s, mmv_multi, g.nrb, 128, xbytes(p->K), p->x, (i64)0, p->K, p[0].w, p[0].ws, p[0].d, p[0].M, p[0].T,
                               b ? b->w : nullptr, b ? b->ws : (i64)0, b ? b->d : nullptr, b ? b->M : 0, b ? b->T : T_Q4_K,
                               c ? c->w : p->w, c ? c->ws : p->ws, c ? c->d : (float*)out, c ? c->M : 1, c ? c->T : p->T);
            } else if (g.np == 2 && (sw == 2 || sw == 3))  // mvg.cuh's gate/up with SwiGLU inside
                launch_smem(s, mvg_gu(sw == 2, sy), g.nrb, 128, xbytes(p->K), p[0].w, p[1].w, p->ws, p->x, p[0].d, p[1].d, p->M, p->K,
                            guargs);
            else if (g.np == 1 && g.a && (norm == 9 || norm == 10))  // mvg.cuh
                launch_smem(s, mvg_lg(p->T, norm == 9, sy), p->nrb, 128, xbytes(p->K), p->w, p->ws, p->x, p->d, p->M, p->K, gargs);
            else if (g.np == 1 && g.a && (norm == 4 || norm == 6))
                launch_smem(s,
                            p->T == T_Q4_K ? (norm == 6 ? mv1_ln<T_Q4_K, true> : mv1_ln<T_Q4_K, false>)
                                           : (norm == 6 ? mv1_ln<T_Q6_K, true> : mv1_ln<T_Q6_K, false>),
                            p->nrb, 128, xbytes(p->K), p->w, p->ws, p->x, p->d, p->M, p->K, na, cnt);
            else if (g.np == 1)
                launch_smem(s, p->T == T_Q4_K ? mmv_q4_k_1 : mmv_q6_k_1, p->nrb, 128, xbytes(p->K), p->w, p->ws, p->x, (i64)0,
                            p->d, (i64)0, p->M, p->K, 1);
            else {
                const Prod* c = g.np > 2 ? p + 2 : nullptr;
                launch_smem(s, mmv_multi, g.nrb, 128, xbytes(4096), p->x, (i64)0, p->K, p[0].w, p[0].ws, p[0].d, p[0].M, p[0].T,
                            p[1].w, p[1].ws, p[1].d, p[1].M, p[1].T, c ? c->w : nullptr, c ? c->ws : (i64)0,
                            c ? c->d : nullptr, c ? c->M : 0, c ? c->T : T_Q4_K);
            }
            if (g.a && norm == 0)
                launch_smem(s, add_rms_norm_q8_k, 1, ADD_NORM_THREADS, 4 * 4096, r, g.a, (const float*)r, dst, (const float*)nw,
                            4096, na.eps, x4, (i64)0, (uint16_t*)nullptr, (i64)0);
            else if (g.a && (norm == 1 || norm == 2))
                launch(s, norm == 1 ? mvn256<false> : mvn256<true>, 1, 256, na, (const float*)g.a);
            else if (g.a && norm == 5)  // the engine's one-row kernel (quant.cu)
                launch(s, add_rms_norm_q8_k_1, 1, 256, r, g.a, (const float*)r, dst, (const float*)nw, 4096, na.eps, x4);
            else if (g.np == 2 && sw == 1)  // the engine's SwiGLU kernel
                launch(s, swiglu_q8_k, dim3(14336 / 256 / Q8KW_WARPS, 1), 32 * Q8KW_WARPS, guargs.dst, (const float*)p[0].d,
                       (const float*)p[1].d, 14336, x14, (i64)0, (uint16_t*)nullptr, (i64)0);
            else if (!g.a && gap && !(g.np == 2 && sw))
                launch(s, kgap, 1, 32, out, gap);
        }
    };
    const int ng = (int)groups.size();
    if (norm == 7) {  // mvc.cuh against the engine's one-row norm kernel (NORM=5): bits, then time
        auto collect = [&](std::vector<float>& v) {
            for (auto& p : prods) CK(cudaMemset(p.d, 0, (size_t)p.M * 4));
            reset();
            chain();
            CK(cudaStreamSynchronize(s));
            const int last = (int)prods.size() - 1;
            for (int j : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, last - 7, last - 4, last - 1, last}) {
                const size_t o = v.size();
                v.resize(o + prods[j].M);
                CK(cudaMemcpy(v.data() + o, prods[j].d, (size_t)prods[j].M * 4, cudaMemcpyDeviceToHost));
            }
            const size_t o = v.size();
            v.resize(o + 2 * 4096 + hx.size() / 4);
            CK(cudaMemcpy(v.data() + o, r, 4096 * 4, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(v.data() + o + 4096, dst, 4096 * 4, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(v.data() + o + 8192, x4, hx.size() / 4 * 4, cudaMemcpyDeviceToHost));
        };
        std::vector<float> v7, v5;
        collect(v7);
        norm = 5;
        collect(v5);
        size_t diff = 0;
        for (size_t i = 0; i < v5.size(); i++) diff += memcmp(&v5[i], &v7[i], 4) != 0;
        printf("NORM=7 (clusters of %d) against NORM=5: %zu of %zu outputs differ%s\n", MVC_CL, diff, v5.size(), diff ? "  WRONG" : "");
        for (int round = 0; round < 3; round++) {
            norm = 5;
            const float t5 = graph_best_ms(s, chain, 2, 5);
            norm = 7;
            const float t7 = graph_best_ms(s, chain, 2, 5);
            norm = 3;
            const float t3 = graph_best_ms(s, chain, 2, 5);
            norm = 8;
            const float t8 = graph_best_ms(s, chain, 2, 5);
            printf("gap %d ns: chain with add_rms_norm_q8_k_1 %.3f ms, norm in the clusters %.3f, no norm %.3f, no norm and every product in clusters %.3f\n", gap, t5, t7, t3, t8);
        }
        return 0;
    }
#ifdef MVX
    if (norm == 11) {  // mvx.cuh: producers count, consumers wait on counts and do the tails
        const size_t nctr = groups.size() * (16 + 56 + 2);  // a producer's groups and its done count, at most
        unsigned *ctrs, *err;
        CK(cudaMalloc(&ctrs, nctr * 4));
        CK(cudaMalloc(&err, 4));
        CK(cudaMemset(err, 0, 4));
        uint8_t* x14n;
        CK(cudaMalloc(&x14n, xbytes(14336)));
        auto chain11 = [&]() {
            CK(cudaMemsetAsync(ctrs, 0, nctr * 4, s));
            size_t ci = 0;
            Tail pend{};
            for (size_t gi = 0; gi < groups.size(); gi++) {
                const Group& g = groups[gi];
                const Prod* p = &prods[g.p0];
                Tail tl = pend;
                pend = Tail{};
                unsigned* oc = nullptr;
                int oper = 0;
                if (g.a || g.np == 2) {  // a producer of tails: O, down (the norm), gate/up (SwiGLU)
                    oc = ctrs + ci;
                    pend.cnt = oc;
                    pend.err = err;
                    if (g.np == 2) {
                        pend.ngroups = p->M / 256, pend.per = 32, pend.kind = 0, pend.cols = p->M;
                        pend.a = p[0].d, pend.b = p[1].d, pend.dst = guargs.dst, pend.x = x14n;
                    } else {
                        oper = 256 / rows_of(p->T);
                        pend.ngroups = p->M / 256, pend.per = oper, pend.kind = 1, pend.cols = p->M;
                        pend.a = p->d, pend.r = r, pend.w = nw, pend.x = gargs.xn, pend.parts = gargs.parts;
                    }
                    pend.done = ctrs + ci + pend.ngroups;
                    ci += pend.ngroups + 1;
                }
                const int sm = xbytes(p->K) + (tl.cnt ? MVX_EXTRA : 0);
                const Prod* b = g.np > 1 ? p + 1 : nullptr;
                const Prod* c = g.np > 2 ? p + 2 : nullptr;
                launch_smem(s, g.np == 2 ? mvx<1> : mvx<0>, g.nrb, 128, sm, p->x, (i64)0, p->K, p[0].w, p[0].ws, p[0].d, p[0].M, p[0].T,
                            b ? b->w : nullptr, b ? b->ws : (i64)0, b ? b->d : nullptr, b ? b->M : 0, b ? b->T : T_Q4_K,
                            c ? c->w : nullptr, c ? c->ws : (i64)0, c ? c->d : nullptr, c ? c->M : 0, c ? c->T : T_Q4_K, tl, oc, oper);
                if (g.np == 3 && gap) launch(s, kgap, 1, 32, out, gap);  // the attention's place
            }
        };
        for (int round = 0; round < 3; round++) {
            norm = 5, sw = 1;
            const float te = graph_best_ms(s, chain, 2, 5);
            const float tx = graph_best_ms(s, chain11, 2, 5);
            norm = 3, sw = 0;
            const float t0 = graph_best_ms(s, chain, 2, 5);
            norm = 3, sw = 1;
            const float t1 = graph_best_ms(s, chain, 2, 5);
            unsigned e = 0;
            CK(cudaMemcpy(&e, err, 4, cudaMemcpyDeviceToHost));
            printf("gap %d ns: engine (norm kernel, swiglu_q8_k) %.3f ms | counted, tails in the consumers %.3f%s | no norm, no SwiGLU %.3f | no norm, swiglu_q8_k %.3f\n",
                   gap, te, tx, e ? " (A WAIT GAVE UP)" : "", t0, t1);
        }
        return 0;
    }
#endif
    if (norm == 12) {  // mvl.cuh: local tails against the engine's chain and none (session 104)
        LocalArgs la{r, nw, nullptr, nullptr, 0, nullptr, nullptr, 4096, 14336, na.eps};
        CK(cudaMalloc(&la.xq, 4096 + 4 * 4096));
        CK(cudaMalloc(&la.parts, 1024 * 8));
        CK(cudaMemset(la.parts, 0, 1024 * 8));
        CK(cudaMalloc(&la.gdst, 14336 * 4));
        CK(cudaMalloc(&la.gx, 14336 + 4 * 14336));
        int parts = 0;
        auto chain12 = [&]() {
            int np = 0;  // the parts of the last producer (O or down)
            for (size_t gi = 0; gi < groups.size(); gi++) {
                const Group& g = groups[gi];
                const Prod* p = &prods[g.p0];
                LocalArgs a = la;
                a.np = np;
                if (g.np == 3) {  // Q/K/V, then the attention's place
                    launch_smem(s, parts ? mvl_multi<true> : mvl_multi<false>, g.nrb, 128, xbytes(4096), p->x, (i64)0, p->K, p[0].w,
                                p[0].ws, p[0].d, p[0].M, p[0].T, p[1].w, p[1].ws, p[1].d, p[1].M, p[1].T, p[2].w, p[2].ws, p[2].d,
                                p[2].M, p[2].T, a);
                    if (gap) launch(s, kgap, 1, 32, out, gap);
                } else if (g.np == 2) {  // gate/up with SwiGLU's tails
                    launch_smem(s, parts ? mvl_gu<true> : mvl_gu<false>, p->M / 8, 128, xbytes(p->K), p[0].w, p[1].w, p->ws, p->x,
                                p[0].d, p[1].d, p->M, p->K, a);
                } else if (g.a) {  // O or down with the norm's tails
                    launch_smem(s, p->T == T_Q4_K ? mvl_lg<T_Q4_K> : mvl_lg<T_Q6_K>, p->nrb, 128, xbytes(p->K), p->w, p->ws, p->x,
                                p->d, p->M, p->K, a);
                    np = p->nrb;
                } else {  // the head
                    launch_smem(s, parts ? mvl_one<T_Q6_K, true> : mvl_one<T_Q6_K, false>, p->nrb, 128, xbytes(p->K), p->w, p->ws,
                                p->x, p->d, p->M, p->K, a);
                    if (gap) launch(s, kgap, 1, 32, out, gap);
                }
            }
        };
        // NORM=13's form: the same launches with the consumers' dots over grouped rows
        // (mv1g: a float scale a group of 8; xg4 and xg14 stand for the rounded rows)
        uint8_t *xg4, *xg14;
        CK(cudaMalloc(&xg4, 2 * 4096));
        CK(cudaMalloc(&xg14, 2 * 14336));
        CK(cudaMemset(xg4, 1, 2 * 4096));
        CK(cudaMemset(xg14, 1, 2 * 14336));
        auto chain13 = [&]() {
            int np = 0;
            for (size_t gi = 0; gi < groups.size(); gi++) {
                const Group& g = groups[gi];
                const Prod* p = &prods[g.p0];
                const uint8_t* xg = p->K == 4096 ? xg4 : xg14;
                const int sm = 2 * p->K;
                LocalArgs a = la;
                a.np = np;
                if (g.np == 3) {
                    launch_smem(s, mvlg_multi, g.nrb, 128, sm, xg, (i64)0, p->K, p[0].w, p[0].ws, p[0].d, p[0].M, p[0].T, p[1].w,
                                p[1].ws, p[1].d, p[1].M, p[1].T, p[2].w, p[2].ws, p[2].d, p[2].M, p[2].T, a);
                    if (gap) launch(s, kgap, 1, 32, out, gap);
                } else if (g.np == 2) {
                    launch_smem(s, mvlg_gu, p->M / 8, 128, sm, p[0].w, p[1].w, p->ws, xg, p[0].d, p[1].d, p->M, p->K, a);
                } else if (g.a) {
                    launch_smem(s, p->T == T_Q4_K ? mvlg_lg<T_Q4_K> : mvlg_lg<T_Q6_K>, p->nrb, 128, sm, p->w, p->ws, xg, p->d, p->M,
                                p->K, a);
                    np = p->nrb;
                } else {
                    launch_smem(s, mvlg_one<T_Q6_K>, p->nrb, 128, sm, p->w, p->ws, xg, p->d, p->M, p->K, a);
                    if (gap) launch(s, kgap, 1, 32, out, gap);
                }
            }
        };
        // layer 0's Q/K/V and gate/up rows, each way from zeroed outputs: mvl_gu's warp
        // mapping and mvl_multi must write every row with mmv_multi's bits (PARTS=0)
        auto rows0 = [&](auto body, std::vector<float>& v) {
            for (auto& p : prods) CK(cudaMemset(p.d, 0, (size_t)p.M * 4));
            reset();
            body();
            CK(cudaStreamSynchronize(s));
            for (int j = 0; j < 6; j++) {
                const size_t o = v.size();
                v.resize(o + prods[j].M);
                CK(cudaMemcpy(v.data() + o, prods[j].d, (size_t)prods[j].M * 4, cudaMemcpyDeviceToHost));
            }
        };
        std::vector<float> va, vb;
        norm = 3, sw = 0;
        rows0(chain, va);
        parts = 0;
        rows0(chain12, vb);
        size_t diff = 0, zero = 0;
        for (size_t i = 0; i < va.size(); i++) diff += memcmp(&va[i], &vb[i], 4) != 0, zero += vb[i] == 0.0f;
        printf("NORM=12 layer 0's Q/K/V and gate/up against mmv_multi: %zu of %zu differ, %zu zero%s\n", diff, va.size(), zero,
               diff ? "  WRONG" : "");
        for (int round = 0; round < 3; round++) {
            norm = 5, sw = 1;
            const float te = graph_best_ms(s, chain, 2, 5);
            parts = 1;
            const float t1 = graph_best_ms(s, chain12, 2, 5);
            parts = 0;
            const float t0 = graph_best_ms(s, chain12, 2, 5);
            const float tg = graph_best_ms(s, chain13, 2, 5);
            norm = 3, sw = 0;
            const float tn = graph_best_ms(s, chain, 2, 5);
            norm = 3, sw = 1;
            const float tw = graph_best_ms(s, chain, 2, 5);
            printf("gap %d ns: engine (norm kernel, swiglu_q8_k) %.3f ms | local tails, parts read %.3f | local tails, no parts read %.3f | local tails, parts, grouped dots (13) %.3f | no norm, no SwiGLU %.3f | no norm, swiglu_q8_k %.3f\n",
                   gap, te, t1, t0, tg, tn, tw);
        }
        return 0;
    }
    if (norm == 9) {  // mvg.cuh against the engine's norm kernel and none: time only
        // forms: {norm, sw, sy}; the engine's chain (the norm kernel, swiglu_q8_k) first
        const int forms[11][3] = {{5, 1, 1}, {9, 2, 2}, {9, 2, 3}, {10, 3, 1}, {10, 3, 2}, {10, 3, 3}, {10, 3, 4}, {10, 3, 5}, {10, 3, 6}, {3, 0, 1}, {3, 1, 1}};
        const char* names[11] = {"engine (norm kernel, swiglu_q8_k)", "both tails (arrive 2)", "both tails (arrive 3)",
                                 "arrivals alone: 1", "2", "3", "4 (barrier only)", "5 (fence, red)", "6 (red.release)", "no norm, no SwiGLU",
                                 "no norm, swiglu_q8_k"};
        for (int round = 0; round < 3; round++) {
            printf("gap %d ns:", gap);
            for (int k = 0; k < 11; k++) {
                norm = forms[k][0], sw = forms[k][1], sy = forms[k][2];
                printf(" | %s %.3f", names[k], graph_best_ms(s, chain, 2, 5));
            }
            printf(" ms\n");
        }
        return 0;
    }
    if (getenv("PFB")) {  // pfr.cuh: the chain with and without the prefetcher, alternating
        std::vector<PfProd> pp;
        std::vector<PfCheck> pc;
        long long off = 0;
        for (auto& p : prods) {
            const long long nb = (long long)p.M * p.ws;
            pp.push_back({p.w, nb, off});
            for (int k = 1; k <= 8; k++) {
                const int r = (int)((long long)p.M * k / 8) - 1;
                pc.push_back({off + (long long)(r + 1) * p.ws, p.d + r});
            }
            off += nb;
        }
        PfProd* dpp;
        PfCheck* dpc;
        CK(cudaMalloc(&dpp, pp.size() * sizeof(PfProd)));
        CK(cudaMalloc(&dpc, pc.size() * sizeof(PfCheck)));
        CK(cudaMemcpy(dpp, pp.data(), pp.size() * sizeof(PfProd), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dpc, pc.data(), pc.size() * sizeof(PfCheck), cudaMemcpyHostToDevice));
        const int npp = (int)pp.size(), npc = (int)pc.size();
        const int pfmode = getenv("PFMODE") ? atoi(getenv("PFMODE")) : 0;  // pfr.cuh's pf_walk modes
        cudaStream_t s2;
        CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
        cudaEvent_t ef, ej;
        CK(cudaEventCreateWithFlags(&ef, cudaEventDisableTiming));
        CK(cudaEventCreateWithFlags(&ej, cudaEventDisableTiming));
        auto run = [&](int pfb, long long window, int chunk) {
            return graph_best_ms(s, [&]() {
                pf_reset<<<8, 128, 0, s>>>(dpc, npc);
                if (pfb) {
                    CK(cudaEventRecord(ef, s));
                    CK(cudaStreamWaitEvent(s2, ef, 0));
                    pf_walk<<<pfb, 32, 0, s2>>>(dpp, npp, dpc, npc, window, chunk, pfmode, out);
                    CK(cudaEventRecord(ej, s2));
                }
                chain();
                if (pfb) CK(cudaStreamWaitEvent(s, ej, 0));
            }, 3, 7);
        };
        printf("prefetcher (gap %d ns, norm %d, mode %d): %lld bytes, %d checkpoints\n", gap, norm, pfmode, off, npc);
        std::vector<int> pb, pw, pk;  // PFB: "blocks:MiB:KiB,..."
        for (const char* t = getenv("PFB"); *t; t += strcspn(t, ","), t += *t == ',') {
            int b = 0, w = 0, c = 0;
            sscanf(t, "%d:%d:%d", &b, &w, &c);
            pb.push_back(b), pw.push_back(w), pk.push_back(c);
        }
        for (int round = 0; round < 2; round++) {
            printf("  chain %.3f ms", run(0, 0, 0));
            for (size_t i = 0; i < pb.size(); i++) printf(" | %d:%d:%d %.3f", pb[i], pw[i], pk[i], run(pb[i], (long long)pw[i] << 20, pk[i] << 10));
            printf("\n");
        }
        return 0;
    }
    auto persistent = [&]() {
        CK(cudaMemsetAsync(bar, 0, 8, s));
        void* args[] = {(void*)&dP, (void*)&dG, (void*)&ng, (void*)&bar, (void*)&pf, (void*)&gap, (void*)&na};
        CK(cudaLaunchCooperativeKernel((void*)mvp, grid, 128, args, smem, s));
    };
    const int S = getenv("S") ? atoi(getenv("S")) : 3, SB = getenv("SB") ? atoi(getenv("SB")) : 53760;
    const int rfull = getenv("FULL") ? atoi(getenv("FULL")) : 0, nocomp = getenv("NOCOMP") ? atoi(getenv("NOCOMP")) : 0;
    if (getenv("REPACK") && atoi(getenv("REPACK"))) {  // mvr.cuh's repacked copies: one bulk copy a stage
        for (auto& p : prods) {
            uint8_t* rp;
            CK(cudaMalloc(&rp, (size_t)p.M * p.ws));
            mvr_repack<<<sms, 256>>>(p, rp, SB, sms);
            p.rp = rp;
        }
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(dP, prods.data(), prods.size() * sizeof(Prod), cudaMemcpyHostToDevice));
        printf("repacked: %d rows a stage for Q4_K, %d for Q6_K\n", mvr_rs_host(T_Q4_K, SB), mvr_rs_host(T_Q6_K, SB));
    }
    const int rsmem = 256 + 2 * smem + 128 + S * SB;
    CK(cudaFuncSetAttribute(mvr, cudaFuncAttributeMaxDynamicSharedMemorySize, rsmem));
    auto ring = [&]() {
        CK(cudaMemsetAsync(bar, 0, 8, s));
        void* args[] = {(void*)&dP, (void*)&dG, (void*)&ng, (void*)&bar, (void*)&gap, (void*)&na, (void*)&S, (void*)&SB, (void*)&smem,
                        (void*)&rfull, (void*)&nocomp};
        CK(cudaLaunchCooperativeKernel((void*)mvr, sms, MVR_NW * 32 + 32, args, rsmem, s));
    };
    auto stream = [&]() {
        for (auto& p : prods) {
            launch(s, kstream, 4 * sms, 256, (const uint4*)p.w, (size_t)p.M * p.ws / 16, out);
            if (gap) launch(s, kgap, 1, 32, out, gap);
        }
    };
    // the same bits: layer 0's, the last layer's and the head's outputs and the final
    // residual row and x4, both ways
    std::vector<float> got[3];
    for (int k = 0; k < 3; k++) {
        for (auto& p : prods) CK(cudaMemset(p.d, 0, (size_t)p.M * 4));
        reset();
        k == 2 ? ring() : k ? persistent() : chain();
        CK(cudaStreamSynchronize(s));
        const int last = (int)prods.size() - 1;
        for (int j : {0, 1, 2, 3, 4, 5, 6, last - 7, last - 4, last - 1, last}) {
            const size_t o = got[k].size();
            got[k].resize(o + prods[j].M);
            CK(cudaMemcpy(got[k].data() + o, prods[j].d, (size_t)prods[j].M * 4, cudaMemcpyDeviceToHost));
        }
        const size_t o = got[k].size();
        got[k].resize(o + 4096 + hx.size() / 4);
        CK(cudaMemcpy(got[k].data() + o, r, 4096 * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(got[k].data() + o + 4096, x4, hx.size() / 4 * 4, cudaMemcpyDeviceToHost));
    }
    for (int k = 1; k < 3; k++) {
        size_t diff = 0;
        for (size_t i = 0; i < got[0].size(); i++) diff += memcmp(&got[0][i], &got[k][i], 4) != 0;
        printf("%s against the chain: %zu of %zu outputs differ%s\n", k == 1 ? "persistent" : "ring", diff, got[0].size(),
               diff ? "  WRONG" : "");
    }
    // timing: the chain and the stream as graphs; the persistent kernel by events (one
    // launch a step, its counter zeroed before it), best of 5 after 2 warm
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    auto best = [&](auto f) {
        float b = 1e30f;
        for (int r = 0; r < 7; r++) {
            CK(cudaEventRecord(e0, s));
            f();
            CK(cudaEventRecord(e1, s));
            CK(cudaEventSynchronize(e1));
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            if (r >= 2) b = std::min(b, ms);
        }
        return b;
    };
    const float tp = best(persistent), tr = best(ring);
    const float tc = graph_best_ms(s, chain, 2, 5), ts = graph_best_ms(s, stream, 2, 5);
    auto tb = [&](float ms) { return bytes / (ms * 1e-3) / 1e12; };
    printf("NORM=%d ", norm);
    printf("one step's mat-vecs (gap %d ns): chain %.3f ms (%.2f TB/s), persistent %.3f (%.2f), ring %.3f (%.2f; S %d x %d B, full %d, nocomp %d), plain stream %.3f (%.2f)\n",
           gap, tc, tb(tc), tp, tb(tp), tr, tb(tr), S, SB, rfull, nocomp, ts, tb(ts));
    return 0;
}
