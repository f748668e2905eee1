// moefs.cu (session 69, not yet run): DeepSeek-V2-Lite's routed experts of one decode row
// (routing, gate/up, SwiGLU, downs, the weighted sum) split along each expert's hidden
// width, as ffs.cu split the 8B's FFN half, against the engine's chain.
//
// The chain (the engine's launches on a MoE layer's main run, PDL edges): mmv_route_q4_k
// (every block routes the row's 64 logits; the k = 6 experts' gate and up rows, Q4_K
// 1,408 x 2,048), swiglu_q8 (SwiGLU, then Q8_0 blocks of 32), mmv_id_q8_0 (the six
// downs, Q8_0 2,048 x 1,408 in mv1's planar rows), moe_sum_add (the weighted sum in slot
// order, plus the shared experts' output). Between the routed gate/up and the downs sits
// a whole-grid dependency, and the downs cannot load a byte until the routing is known
// and the gate/up grid has ended.
//
// moefs: 264 blocks (6 experts x 44 Q8_0 blocks of hidden values), block b owning 32
// hidden values of one slot's expert. Every block routes (moe_route, as mmv_route_q4_k),
// then loads its 32 gate and 32 up rows (warp w: 4 of each, mv1's lanes and sums: the
// chain's bits), its SwiGLU values (swiglu_q8's operations) and their Q8_0 block
// (q8_quant_lane: a Q8_0 block is its 32 values' own, so the same bytes as swiglu_q8
// without any exchange). Clusters of CS blocks (CS Q8_0 blocks of one expert) then read
// each other's blocks from distributed shared memory, and block r of the cluster
// computes down rows [2048 r / CS, 2048 (r + 1) / CS) over the cluster's 32 CS columns
// (mv1_q8_0's lane pairs and term formula, the CS blocks' terms added by shuffles): a
// partial sum a row into P[cluster]. Its first DS steps of down weights are loaded
// before the cluster barrier (they depend on the routing only). moefs_sum (replacing
// moe_sum_add, one launch) adds each slot's 44 / CS partials in order, then the slots'
// weighted sums in slot order as moe_sum_add does, and the shared experts' output.
//
// Down's sums are the same terms in another order (partials by 32 CS columns), so the
// outputs are compared with a tolerance; the Q8_0 SwiGLU bytes bit for bit.
// Prints the checks and graph times of L MoE layers (different logits, so different
// experts, each layer), GAP ns of a spinning kernel between them (the attention half).
//
// nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/moefs moefs.cu && /tmp/moefs
#include "micro.cuh"
#include "../../kernels/cuda/matmul.cu"
#include "../../kernels/cuda/quant.cu"
#include "../../kernels/cuda/moe.cu"
#include "ffnhost.cuh"
#include <cmath>

#define ME 2048  // model width (gate/up's K, down's rows)
#define MF 1408  // an expert's hidden width
#define MX 64    // experts
#define MK 6     // experts a token
#define MNB (MF / 32)  // Q8_0 blocks of hidden values (44)

// moefs<CS, DS>: grid MK * MNB blocks of 256 threads, clusters of CS (the launch
// attribute). P [MK * MNB / CS][ME]. x8: the SwiGLU Q8_0 rows (the check), MK rows of xs8.
template <int CS, int DS>
__global__ void __launch_bounds__(256, 2)
    moefs(int* ids, float* wout, const float* logits, const uint8_t* G, const uint8_t* U, i64 gws, i64 gest, const uint8_t* Xq,
          const uint8_t* D, i64 dws, i64 dest, float* P, uint8_t* x8, i64 xs8) {
    static_assert(MNB % CS == 0 && 16 % CS == 0, "cluster");
    constexpr int NH = MNB / CS;   // clusters an expert
    constexpr int RW = 16 / CS;    // down rows a warp step (2 CS lanes a row)
    constexpr int NR = ME / CS;    // down rows a block
    constexpr int NS = NR / (8 * RW);  // steps a warp (16)
    __shared__ MoeSmem s;
    __shared__ float gs[32], us[32];
    __shared__ __align__(16) uint8_t q8[32 + 16];  // the block's Q8_0 block: quants, then d (float)
    __shared__ __align__(16) uint8_t xc[32 * CS + 16 * CS];  // the cluster's: CS blocks of quants, then CS d
    unsigned r = 0;
    if (CS > 1) asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    const int cl = blockIdx.x / CS, j = cl / NH, h = cl % NH, hb = h * CS + (int)r;  // slot, chunk, hidden block
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, c = lane & 3, ib = lane >> 2;
    float bv[2] = {0, 0};
    pdl();
    int xv[16];
    float yd;
    int4 bs;
    q4k_x(Xq, ME, ib, c, false, xv, &yd, &bs);  // in flight while warp 0 routes
    if (warp == 0) {
        moe_route<2>(s, logits, bv, false, MX, MK, 1, 1, 0, 0, 1.0f);
        if (blockIdx.x == 0)
            for (int q = lane; q < MK; q += 32) ids[q] = s.isel[q], wout[q] = s.wsel[q];
    }
    __syncthreads();
    const int e = s.isel[j];
    // gate rows 32 hb + 4 warp .. + 3, then up's: both tasks' weights in flight
    uint4 h0[4], a0[4], b0[4], h1[4], a1[4], b1[4];
    {
        const uint8_t* gb = G + (i64)e * gest + 144 * ib;
        const uint8_t* ub = U + (i64)e * gest + 144 * ib;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const i64 row = (i64)(32 * hb + 4 * warp + i) * gws;
            h0[i] = ldw16<wev(true)>(gb + row), a0[i] = ldw16<wev(true)>(gb + row + 16 + 32 * c), b0[i] = ldw16<wev(true)>(gb + row + 32 + 32 * c);
            h1[i] = ldw16<wev(true)>(ub + row), a1[i] = ldw16<wev(true)>(ub + row + 16 + 32 * c), b1[i] = ldw16<wev(true)>(ub + row + 32 + 32 * c);
        }
    }
    // down: this block's rows, the cluster's CS blocks of columns; lane: row lane / (2 CS),
    // block (lane / 2) % CS, half lane & 1
    const int lo = NR * (int)r, rl = lane / (2 * CS), blk = (lane >> 1) % CS, half = lane & 1;
    const uint8_t* drow0 = D + (i64)e * dest + (i64)(lo + RW * warp + rl) * dws;
    const int col = h * CS + blk;  // the down's Q8_0 block of this lane
    auto dload = [&](int st, int4& q, uint16_t& d) {
        const uint8_t* p = drow0 + (i64)(st * 8 * RW) * dws;
        q = ldw16i<wev(true)>(p + 32 * col + 16 * half);
        d = ldw2<wev(true)>(p + 32 * MNB + 2 * col);
    };
    int4 dq[DS];
    uint16_t dd[DS];
    {
        // rows_sum: four rows' lane terms (mv1_q4_k's); rows_store: their warp sums into o
        float acc[4];
        auto rows_sum = [&](const uint4* h, const uint4* a, const uint4* b) {
#pragma unroll
            for (int i = 0; i < 4; i++) {
                int sb;
                const int sa = q4k_dot(a[i], b[i], xv, &sb);
                acc[i] = 0.0f + q4k_part(h[i], c, sa, sb, yd, bs);
            }
        };
        auto rows_store = [&](float* o) {
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const float v = warp_sum(acc[i]);
                if (lane == 0) o[4 * warp + i] = v;
            }
        };
        rows_sum(h0, a0, b0);
        // gate's registers are free: down's first DS steps (they depend on the routing only)
#pragma unroll
        for (int t = 0; t < DS; t++) dload(t, dq[t], dd[t]);
        rows_store(gs);
        rows_sum(h1, a1, b1);
        rows_store(us);
    }
    __syncthreads();
    if (warp == 0) {  // swiglu_q8's operations and rounding of the block's 32 values
        const float x = gs[lane], y = us[lane];
        const float ex = (float)exp(-(double)x);
        const float v = x / (1.0f + ex) * y;
        q8_quant_lane(v, q8, 0, 32, 0);
        __syncwarp();
        x8[(i64)j * xs8 + 32 * hb + lane] = q8[lane];
        if (lane == 0) ((float*)(x8 + (i64)j * xs8 + MF))[hb] = ((const float*)(q8 + 32))[0];
    }
    if (CS > 1) {
        asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
        if (threadIdx.x < 9 * CS) {  // the cluster's blocks: 8 words of quants and the d of each
            const int pr = threadIdx.x / 9, wd = threadIdx.x % 9;
            unsigned a = (unsigned)__cvta_generic_to_shared(q8 + 4 * wd), p, v;
            asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(p) : "r"(a), "r"(pr));
            asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(p) : "memory");
            if (wd < 8) ((unsigned*)xc)[8 * pr + wd] = v;
            else ((unsigned*)(xc + 32 * CS))[pr] = v;
        }
        asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");  // peers may leave once all have read
        __syncthreads();
    } else {
        __syncthreads();
        if (threadIdx.x < 9) {
            const unsigned v = ((const unsigned*)q8)[threadIdx.x];
            if (threadIdx.x < 8) ((unsigned*)xc)[threadIdx.x] = v;
            else ((unsigned*)(xc + 32))[0] = v;
        }
        __syncthreads();
    }
    const int4 xq = *(const int4*)(xc + 32 * blk + 16 * half);
    const float dx = ((const float*)(xc + 32 * CS))[blk];
    float* pr = P + (i64)cl * ME + lo + RW * warp + rl;
    for (int t0 = 0; t0 < NS; t0 += DS) {
#pragma unroll
        for (int u = 0; u < DS; u++) {
            const int t = t0 + u;
            int sm = __dp4a(dq[u].x, xq.x, __dp4a(dq[u].y, xq.y, __dp4a(dq[u].z, xq.z, __dp4a(dq[u].w, xq.w, 0))));
            sm += __shfl_xor_sync(0xffffffffu, sm, 1);
            float v = half == 0 ? (float)sm * (h2f(dd[u]) * dx) : 0.0f;
#pragma unroll
            for (int o = 2; o < 2 * CS; o <<= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
            if ((lane & (2 * CS - 1)) == 0) pr[t * 8 * RW] = v;
            if (t + DS < NS) dload(t + DS, dq[u], dd[u]);
        }
    }
    if (CS > 1) asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// moefs_sum: dst[c] = sum over slots q of (the slot's partials, chunk order) * w[q], in
// slot order (moe_sum_add's products and adds); sum[c] = dst[c] + b[c]. nh partials a
// slot, P [MK * nh][ME].
__global__ void __launch_bounds__(256) moefs_sum(float* dst, const float* P, int nh, const float* w, float* sum, const float* b) {
    pdl();
    const int cidx = blockIdx.x * 256 + threadIdx.x;
    if (cidx >= ME) return;
    const float bv = b[cidx];
    float s = 0;
    for (int q = 0; q < MK; q++) {
        float v[64];
        const float* p = P + (i64)q * nh * ME + cidx;
#pragma unroll
        for (int t = 0; t < 64; t++)
            if (t < nh) v[t] = __ldcg(p + (i64)t * ME);
        float d = v[0];
#pragma unroll
        for (int t = 1; t < 64; t++)
            if (t < nh) d += v[t];
        s = q == 0 ? d * w[0] : s + d * w[q];
    }
    dst[cidx] = s;
    sum[cidx] = s + bv;
}

struct MoeLayer {
    uint8_t *gate, *up, *down;
    float* logits;
};

int main() {
    const int L = getenv("L") ? atoi(getenv("L")) : 26, gap = getenv("GAP") ? atoi(getenv("GAP")) : 0;
    const i64 gws = rowbytes(T_Q4_K, ME), gest = gws * MF, dws = rowbytes(T_Q8_0, MF), dest = dws * ME;
    const size_t gbytes = (size_t)MX * gest, dbytes = (size_t)MX * dest;
    std::vector<MoeLayer> ly(L);
    for (int l = 0; l < L; l++) {
        MoeLayer& y = ly[l];
        CK(cudaMalloc(&y.gate, gbytes));
        CK(cudaMalloc(&y.up, gbytes));
        CK(cudaMalloc(&y.down, dbytes));
        CK(cudaMalloc(&y.logits, MX * 4));
        if (l < 2) {
            fill_weights(y.gate, T_Q4_K, MX * MF, ME, 1 + 3 * l);
            fill_weights(y.up, T_Q4_K, MX * MF, ME, 2 + 3 * l);
            fill_weights(y.down, T_Q8_0, MX * ME, MF, 3 + 3 * l);
        } else {
            CK(cudaMemcpy(y.gate, ly[l % 2].gate, gbytes, cudaMemcpyDeviceToDevice));
            CK(cudaMemcpy(y.up, ly[l % 2].up, gbytes, cudaMemcpyDeviceToDevice));
            CK(cudaMemcpy(y.down, ly[l % 2].down, dbytes, cudaMemcpyDeviceToDevice));
        }
        std::vector<float> lg(MX);
        for (int x = 0; x < MX; x++) lg[x] = (float)(((x * 37 + l * 11) * 7919) % 1000) / 250.0f;
        CK(cudaMemcpy(y.logits, lg.data(), MX * 4, cudaMemcpyHostToDevice));
    }
    // the token's Q8_K row of ME values (ffn_input), and the shared experts' output b
    uint8_t* xq = ffn_input(ME);
    float* b;
    CK(cudaMalloc(&b, ME * 4));
    {
        std::vector<float> hb(ME);
        for (int q = 0; q < ME; q++) hb[q] = (float)((q * 104729) % 2001 - 1000) / 4000.0f;
        CK(cudaMemcpy(b, hb.data(), ME * 4, cudaMemcpyHostToDevice));
    }
    const int xs8 = ((MF + 4 * MNB) + 15) & ~15;  // a Q8_0 row of MF (mv1_bytes(T_Q8_0, MF))
    int *ids, *idf;
    float *wc, *wf, *gc, *uc, *swc, *dc, *P, *dstc, *sumc, *dstf, *sumf;
    uint8_t *x8c, *x8f;
    unsigned* out;
    CK(cudaMalloc(&ids, 64 * 4));
    CK(cudaMalloc(&idf, 64 * 4));
    CK(cudaMalloc(&wc, 64 * 4));
    CK(cudaMalloc(&wf, 64 * 4));
    for (float** q : {&gc, &uc, &swc}) CK(cudaMalloc(q, MK * MF * 4));
    CK(cudaMalloc(&dc, MK * ME * 4));
    CK(cudaMalloc(&P, (size_t)MK * MNB * ME * 4));  // enough for CS 1
    for (float** q : {&dstc, &sumc, &dstf, &sumf}) CK(cudaMalloc(q, (size_t)L * ME * 4));
    CK(cudaMalloc(&x8c, (size_t)MK * xs8));
    CK(cudaMalloc(&x8f, (size_t)MK * xs8));
    CK(cudaMalloc(&out, 1 << 20));
    CK(cudaDeviceSynchronize());
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    int nsm = 0;
    CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
    const int rgrid = 3 * nsm, nrb = (ME + 4 * Q80_ID_R1 - 1) / (4 * Q80_ID_R1);
    auto chain = [&]() {
        for (int l = 0; l < L; l++) {
            const MoeLayer& y = ly[l];
            launch(st, mmv_route_q4_k, rgrid, 128, ids, wc, (const float*)y.logits, (const float*)nullptr, MX, MK, 1, 1, 0, 0, 1.0f,
                   (const uint8_t*)y.gate, (const uint8_t*)y.up, gws, gest, (const uint8_t*)xq, gc, uc, (i64)MF, MF, ME);
            launch(st, swiglu_q8, dim3((MF + 255) / 256, MK), 256, swc, (const float*)gc, (const float*)uc, MF, x8c, (i64)xs8, 0);
            launch_smem(st, mmv_id_q8_0, MK * nrb, 128, xs8, (const uint8_t*)y.down, dws, (const uint8_t*)x8c, (i64)xs8, dc, (i64)ME,
                        ME, MF, 1, (const int*)ids, dest, 1, nrb, 1, (const uint8_t*)nullptr, (float*)nullptr, (i64)0, 0, 0);
            launch(st, moe_sum_add, ME / 256, 256, dstc + (i64)l * ME, (const float*)dc, (const float*)wc, MK, ME, 1, sumc + (i64)l * ME,
                   (const float*)b);
            if (gap) launch(st, kgap, 1, 32, out, gap);
        }
    };
    struct Var {
        const char* name;
        int cs;
        void (*k)(int*, float*, const float*, const uint8_t*, const uint8_t*, i64, i64, const uint8_t*, const uint8_t*, i64, i64, float*,
                  uint8_t*, i64);
    };
    Var vars[] = {{"cs1 ds4", 1, moefs<1, 4>}, {"cs2 ds4", 2, moefs<2, 4>}, {"cs4 ds4", 4, moefs<4, 4>},
                  {"cs4 ds8", 4, moefs<4, 8>}, {"cs4 ds2", 4, moefs<4, 2>}};
    auto fused = [&](const Var& v) {
        return [&, v]() {
            for (int l = 0; l < L; l++) {
                const MoeLayer& y = ly[l];
                launch_cl(st, v.k, MK * MNB, 256, 0, v.cs > 1 ? v.cs : 0, idf, wf, (const float*)y.logits, (const uint8_t*)y.gate,
                          (const uint8_t*)y.up, gws, gest, (const uint8_t*)xq, (const uint8_t*)y.down, dws, dest, P, x8f, (i64)xs8);
                launch(st, moefs_sum, ME / 256, 256, dstf + (i64)l * ME, (const float*)P, MNB / v.cs, (const float*)wf, sumf + (i64)l * ME,
                       (const float*)b);
                if (gap) launch(st, kgap, 1, 32, out, gap);
            }
        };
    };
    printf("%d MoE layers, %.1f MB of routed weights a token-layer; gap %d ns\n", L,
           (2.0 * MK * gest + (double)MK * dest) / 1e6, gap);
    chain();
    CK(cudaStreamSynchronize(st));
    CK(cudaGetLastError());
    for (const Var& v : vars) {
        fused(v)();
        CK(cudaStreamSynchronize(st));
        CK(cudaGetLastError());
        // the last layer's SwiGLU rows and ids (both ran every layer in order), every layer's sums
        std::vector<uint8_t> a((size_t)MK * xs8), c((size_t)MK * xs8);
        CK(cudaMemcpy(a.data(), x8c, a.size(), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(c.data(), x8f, c.size(), cudaMemcpyDeviceToHost));
        size_t diff = 0;
        for (int q = 0; q < MK; q++)
            for (int t = 0; t < MF + 4 * MNB; t++) diff += a[(size_t)q * xs8 + t] != c[(size_t)q * xs8 + t];
        std::vector<int> i1(MK), i2(MK);
        CK(cudaMemcpy(i1.data(), ids, MK * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(i2.data(), idf, MK * 4, cudaMemcpyDeviceToHost));
        std::vector<float> s1((size_t)L * ME), s2((size_t)L * ME);
        CK(cudaMemcpy(s1.data(), dstc, s1.size() * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(s2.data(), dstf, s2.size() * 4, cudaMemcpyDeviceToHost));
        double worst = 0, amax = 0;
        for (size_t q = 0; q < s1.size(); q++) worst = fmax(worst, fabs((double)s1[q] - s2[q])), amax = fmax(amax, fabs((double)s1[q]));
        printf("%-8s experts %d %d %d %d %d %d (%s); SwiGLU Q8_0 bytes differing %zu; sum max |diff| %.2g of max |out| %.3g%s\n", v.name,
               i2[0], i2[1], i2[2], i2[3], i2[4], i2[5], i1 == i2 ? "as the chain's" : "NOT the chain's", diff, worst / amax, amax,
               diff || i1 != i2 || !(worst <= 2e-6 * amax) ? "  WRONG" : "");
        CK(cudaMemset(x8f, 0, (size_t)MK * xs8));
    }
    for (int rd = 0; rd < 3; rd++) {
        printf("round %d: chain %.2f", rd, 1e3 * graph_best_ms(st, chain, 2, 5) / L);
        for (const Var& v : vars) printf(", %s %.2f", v.name, 1e3 * graph_best_ms(st, fused(v), 2, 5) / L);
        printf(" us a layer\n");
    }
    return 0;
}
