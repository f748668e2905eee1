// qkb.cu (session 69, not yet run): DeepSeek-V2-Lite's absorbed query of one decode row
// (q_nope's product, its Q8_0 rounding, attn_k_b's per-head product) in one launch of
// clusters a head, against the engine's chain of three.
//
// The chain (the attention's main run, PDL edges): mmv_q4_k_1e (q_nope: 16 heads x 128
// rows of 2,048, Q4_K), quant_q8 (each head's 128 values to Q8_0), mmv_idw_q8_0
// (attn_k_b: each head's 512 x 128 Q8_0 matrix times its row, into the latent dims of
// the head's [rope 64 | latent 512] row). attn_k_b's head h needs q_nope's head h only,
// yet waits for every head (two whole-grid dependencies, ~8 us of the chain in s64's
// timeline: q_nope 2.9, quant_q8 1.3, attn_k_b 3.9).
//
// qkb: a cluster of CS = 8 blocks a head. Block r computes q_nope rows 16 r .. 16 r + 15
// of its head (warp w two: mv1_q4_k's lanes and sums), the cluster's 128 values are read
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
#define QCS 8     // blocks a head

__global__ void __cluster_dims__(QCS, 1, 1) __launch_bounds__(256)
    qkb(const uint8_t* Wq, i64 wqs, const uint8_t* Xq, const uint8_t* Wkb, i64 kbs, i64 kbest, float* D, i64 dstride) {
    constexpr int RQ = QN / QCS;         // q_nope rows a block (16: two a warp)
    constexpr int RK = QL / QCS;         // attn_k_b rows a block (64: two steps of four rows a warp)
    __shared__ float qn[RQ], xs[QN];
    __shared__ __align__(16) uint8_t qrow[QN + 16];  // the head's Q8_0 row: quants, then four d
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    const int hd = blockIdx.x / QCS, warp = threadIdx.x >> 5, lane = threadIdx.x & 31, c = lane & 3, ib = lane >> 2;
    // q_nope's two rows a warp, attn_k_b's two steps: all before the wait
    uint4 h[2], qa[2], qb[2];
#pragma unroll
    for (int i = 0; i < 2; i++) {
        const uint8_t* p = Wq + (i64)(QN * hd + RQ * (int)r + 2 * warp + i) * wqs + 144 * ib;
        h[i] = ldw16<wev(false, true)>(p), qa[i] = ldw16<wev(false, true)>(p + 16 + 32 * c), qb[i] = ldw16<wev(false, true)>(p + 32 + 32 * c);
    }
    const int rl = lane >> 3, blk = (lane >> 1) & 3, half = lane & 1;
    int4 kq[2];
    uint16_t kd[2];
#pragma unroll
    for (int s = 0; s < 2; s++) {
        const uint8_t* p = Wkb + (i64)hd * kbest + (i64)(RK * (int)r + 32 * s + 4 * warp + rl) * kbs;
        kq[s] = ldw16i<wev(true)>(p + 32 * blk + 16 * half);
        kd[s] = ldw2<wev(true)>(p + QN + 2 * blk);
    }
    pdl();
    int xv[16];
    float yd;
    int4 bs;
    q4k_x(Xq, QE, ib, c, false, xv, &yd, &bs);
#pragma unroll
    for (int i = 0; i < 2; i++) {
        int sb;
        const int sa = q4k_dot(qa[i], qb[i], xv, &sb);
        float acc = 0;
        acc += q4k_part(h[i], c, sa, sb, yd, bs);
        const float v = warp_sum(acc);
        if (lane == 0) qn[2 * warp + i] = v;
    }
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
    if (threadIdx.x < QN) {  // the head's 128 values from the cluster's blocks
        const int pr = threadIdx.x / RQ, off = threadIdx.x % RQ;
        unsigned a = (unsigned)__cvta_generic_to_shared(qn + off), pa;
        float v;
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(pa) : "r"(a), "r"(pr));
        asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(pa) : "memory");
        xs[threadIdx.x] = v;
    }
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");  // the peers may leave once all have read
    __syncthreads();
    if (warp < QN / 32) q8_quant_lane(xs[32 * warp + lane], qrow, warp, QN, 0);  // quant_q8's bytes
    __syncthreads();
    const int4 xq = *(const int4*)(qrow + 32 * blk + 16 * half);
    const float dx = ((const float*)(qrow + QN))[blk];
    float* out = D + (i64)hd * dstride + RK * (int)r + 4 * warp + rl;
#pragma unroll
    for (int s = 0; s < 2; s++) {
        int sm = __dp4a(kq[s].x, xq.x, __dp4a(kq[s].y, xq.y, __dp4a(kq[s].z, xq.z, __dp4a(kq[s].w, xq.w, 0))));
        sm += __shfl_xor_sync(0xffffffffu, sm, 1);
        float v = 0;
        if (half == 0) v += (float)sm * (h2f(kd[s]) * dx);
        // mv1_q8_0's warp_sum over a warp whose lanes 0, 2, 4, 6 hold the four terms: the
        // zeros of lanes 8-31 (xor 16, 8), then xor 4, 2, 1
        v = v + 0.0f;
        v = v + 0.0f;
        v += __shfl_xor_sync(0xffffffffu, v, 4);
        v += __shfl_xor_sync(0xffffffffu, v, 2);
        v += __shfl_xor_sync(0xffffffffu, v, 1);
        if ((lane & 7) == 0) out[32 * s] = v;
    }
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

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
    float *qn, *dc, *df;
    uint8_t *xq = ffn_input(QE), *q8;  // the row's Q8_K values
    const int xqn = xbytes(QE), q8s = ((QN + 4 * (QN / 32)) + 15) & ~15;
    CK(cudaMalloc(&qn, QH * QN * 4));
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
            launch(st, qkb, QH * QCS, 256, (const uint8_t*)wq[l], wqs, (const uint8_t*)xq, (const uint8_t*)wk[l], kbs, kbest,
                   df + (i64)l * QH * QR + 64, (i64)QR);
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
