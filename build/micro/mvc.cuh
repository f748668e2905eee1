// mvc.cuh (session 48): the norm inside the next product by a thread block cluster. mvp.cu's
// NORM=7: no add_rms_norm_q8_k_1 launch; the product after a norm (Q/K/V, gate/up, the
// head) is launched in clusters of MVC_CL blocks, and each cluster makes the Q8_K row
// itself, in distributed shared memory, with add_rms_norm_q8_k_1's bits:
//   - block c's warp 0 takes that kernel's warp c (cols 4096: 8 warps of 256 threads):
//     thread t = 32 c + lane sums (a + r)^2 over j = t, t + 256, ... in order, in double,
//     then the warp's shuffle sum; lane 0 stores it in slot c of every block of the
//     cluster (st.shared::cluster), and a cluster barrier;
//   - every block sums the 8 slots in order: the kernel's mean and scale;
//   - warps 1 and 2 of block c take Q8_K blocks c and c + 8 (that kernel's warp c's two
//     blocks), round them as q8k_quant_warp does and store the quants, scales and bsums
//     into every block's row (mv1_stage's layout and swizzle), and a second barrier.
// Cluster 0 also writes the sum (rout), dst and the row in global memory. The five-way
// history of the norm inside a product (NOTES.md, sessions 11, 33, 34) lost to the
// boundary because every block waited on a whole-grid flag or did the whole norm alone;
// here eight blocks share it and meet at hardware cluster barriers.
#pragma once

#ifndef MVC_CL
#define MVC_CL 8
#endif

struct MvcNorm {  // r_out = a + r_in; dst = RMSNorm(r_out) * w; x = dst in Q8_K
    const float *a, *rin, *w;
    float *rout, *dst;
    uint8_t* x;
    int cols;
    float eps;
};

__device__ __forceinline__ int mvc_rank() {
    unsigned r;
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return (int)r;
}
__device__ __forceinline__ uint32_t mvc_map(uint32_t a, int r) {
    uint32_t ra;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(ra) : "r"(a), "r"(r));
    return ra;
}

// mvc_ready: every thread of the block, after its first weight loads (in place of
// mv1_ready<true>); wv: warps 1-2's norm weights (read before the wait). Returns xs.
__device__ __forceinline__ const uint8_t* mvc_ready(uint8_t* xs, const MvcNorm& nm, const float wv[8], int sh) {
    __shared__ double parts[8];
    const int t = threadIdx.x, lane = t & 31, wp = t >> 5, c = mvc_rank(), K = nm.cols, nb = K / 256;
    const bool g0 = blockIdx.x < MVC_CL;  // cluster 0 writes the global outputs
    pdl_wait();
    float s[8];
    int ib = -1;
    if (wp == 0) {
        float av[16], rv[16];
        const int j0 = 32 * c + lane;
#pragma unroll
        for (int k = 0; k < 16; k++)
            if (k < nb) av[k] = __ldcg(nm.a + j0 + 256 * k), rv[k] = __ldcg(nm.rin + j0 + 256 * k);
        double ss = 0;
#pragma unroll
        for (int k = 0; k < 16; k++)
            if (k < nb) {
                const float v = av[k] + rv[k];
                ss += (double)v * (double)v;
            }
        ss = warp_sumd(ss);
        if (lane == 0) {
            const uint32_t p = (uint32_t)__cvta_generic_to_shared(parts + c);
            for (int r = 0; r < MVC_CL; r++) asm volatile("st.shared::cluster.f64 [%0], %1;" ::"r"(mvc_map(p, r)), "d"(ss) : "memory");
        }
    } else if (wp <= 2) {
        ib = c + 8 * (wp - 1);
        if (ib < nb) {
            const float4* ap = (const float4*)(nm.a + ib * 256 + 8 * lane);
            const float4* rp = (const float4*)(nm.rin + ib * 256 + 8 * lane);
            const float4 a0 = __ldcg(ap), a1 = __ldcg(ap + 1), r0 = __ldcg(rp), r1 = __ldcg(rp + 1);
            s[0] = a0.x + r0.x, s[1] = a0.y + r0.y, s[2] = a0.z + r0.z, s[3] = a0.w + r0.w;
            s[4] = a1.x + r1.x, s[5] = a1.y + r1.y, s[6] = a1.z + r1.z, s[7] = a1.w + r1.w;
            if (g0) {
                *(float4*)(nm.rout + ib * 256 + 8 * lane) = make_float4(s[0], s[1], s[2], s[3]);
                *(float4*)(nm.rout + ib * 256 + 8 * lane + 4) = make_float4(s[4], s[5], s[6], s[7]);
            }
        } else {
            ib = -1;
        }
    }
    cluster_sync();
    if (ib >= 0) {
        double tot = 0;
        for (int k = 0; k < 8; k++) tot += parts[k];
        const float mean = (float)(tot / (double)K);
        const float scale = (float)(1.0 / sqrt((double)(mean + nm.eps)));
        float v[8];
#pragma unroll
        for (int i = 0; i < 8; i++) v[i] = s[i] * scale * wv[i];
        if (g0) {
            *(float4*)(nm.dst + ib * 256 + 8 * lane) = make_float4(v[0], v[1], v[2], v[3]);
            *(float4*)(nm.dst + ib * 256 + 8 * lane + 4) = make_float4(v[4], v[5], v[6], v[7]);
            q8k_quant_warp(v, nm.x, ib, K);
        }
        // q8k_quant_warp's rounding, into every block's row
        float am = -2.0f, x = 0.0f;
        int idx = 0;
#pragma unroll
        for (int i = 0; i < 8; i++) {
            float m = fabsf(v[i]);
            if (m != m) m = -1.0f;
            if (m > am) { am = m; idx = 8 * lane + i; x = v[i]; }
        }
        for (int o = 16; o > 0; o >>= 1) {
            const float a2 = __shfl_xor_sync(0xffffffffu, am, o), x2 = __shfl_xor_sync(0xffffffffu, x, o);
            const int i2 = __shfl_xor_sync(0xffffffffu, idx, o);
            if (q8k_first(a2, i2, am, idx)) { am = a2; idx = i2; x = x2; }
        }
        const float iscale = q8k_iscale(am, x), d = q8k_d(am, iscale);
        uint32_t p[2] = {0, 0};
        int sum = 0;
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const int q = q8k_q(am, iscale, v[i]);
            sum += q;
            p[i / 4] |= (uint32_t)(q & 255) << (8 * (i % 4));
        }
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        const int q16 = ib * 16 + lane / 2;  // the 16-byte chunk of the quants
        const uint32_t base = (uint32_t)__cvta_generic_to_shared(xs);
        const uint32_t qa = base + 16 * mv1_swz(q16, sh) + 8 * (lane & 1);
        const uint32_t ba = base + Q8K_BSUMS(K) + 4 * q16, da = base + K + 4 * ib;
        for (int r = 0; r < MVC_CL; r++) {
            asm volatile("st.shared::cluster.v2.u32 [%0], {%1, %2};" ::"r"(mvc_map(qa, r)), "r"(p[0]), "r"(p[1]) : "memory");
            if ((lane & 1) == 0) asm volatile("st.shared::cluster.u32 [%0], %1;" ::"r"(mvc_map(ba, r)), "r"(sum) : "memory");
            if (lane == 0) asm volatile("st.shared::cluster.f32 [%0], %1;" ::"r"(mvc_map(da, r)), "f"(d) : "memory");
        }
    }
    cluster_sync();
    return xs;
}

// mvc_weights: warps 1-2's norm weights, before the wait.
__device__ __forceinline__ void mvc_weights(const MvcNorm& nm, float wv[8]) {
    const int lane = threadIdx.x & 31, wp = threadIdx.x >> 5, ib = mvc_rank() + 8 * (wp - 1);
    if (wp >= 1 && wp <= 2 && ib < nm.cols / 256) {
        const float4 x = *(const float4*)(nm.w + ib * 256 + 8 * lane), y = *(const float4*)(nm.w + ib * 256 + 8 * lane + 4);
        wv[0] = x.x, wv[1] = x.y, wv[2] = x.z, wv[3] = x.w, wv[4] = y.x, wv[5] = y.y, wv[6] = y.z, wv[7] = y.w;
    }
}

// mvc_q4_k / mvc_q6_k: mv1_q4_k<true, false> / mv1_q6_k<true, false> with mvc_ready in
// place of mv1_ready (the same loads and sums otherwise).
__device__ __forceinline__ void mvc_q4_k(const uint8_t* W, i64 ws, uint8_t* xs, float* D, int M, int K, int wr, const MvcNorm& nm,
                                         const float wv[8]) {
    const int lane = threadIdx.x & 31, c = lane & 3, nb = K / 256;
    const int r0 = wr * Q4K_R1;
    const uint8_t* w[Q4K_R1];
#pragma unroll
    for (int i = 0; i < Q4K_R1; i++) w[i] = W + (i64)min(r0 + i, M - 1) * ws;
    uint4 h[Q4K_R1], qa[Q4K_R1], qb[Q4K_R1];
    int ib = lane >> 2;
    if (ib < nb) {
#pragma unroll
        for (int i = 0; i < Q4K_R1; i++) {
            const uint8_t* p = w[i] + 144 * ib;
            h[i] = ldw16<false>(p), qa[i] = ldw16<false>(p + 16 + 32 * c), qb[i] = ldw16<false>(p + 32 + 32 * c);
        }
    }
    const uint8_t* X = mvc_ready(xs, nm, wv, 0);
    float acc[Q4K_R1];
#pragma unroll
    for (int i = 0; i < Q4K_R1; i++) acc[i] = 0;
    for (; ib < nb; ib += 8) {
        uint4 nh[Q4K_R1], na[Q4K_R1], nq[Q4K_R1];
        if (ib + 8 < nb) {
#pragma unroll
            for (int i = 0; i < Q4K_R1; i++) {
                const uint8_t* p = w[i] + 144 * (ib + 8);
                nh[i] = ldw16<false>(p), na[i] = ldw16<false>(p + 16 + 32 * c), nq[i] = ldw16<false>(p + 32 + 32 * c);
            }
        }
        int xv[16];
        float yd;
        int4 bs;
        q4k_x(X, K, ib, c, true, xv, &yd, &bs);
#pragma unroll
        for (int i = 0; i < Q4K_R1; i++) {
            int sb;
            const int sa = q4k_dot(qa[i], qb[i], xv, &sb);
            acc[i] += q4k_part(h[i], c, sa, sb, yd, bs);
            h[i] = nh[i], qa[i] = na[i], qb[i] = nq[i];
        }
    }
    mv1_store<Q4K_R1>(acc, D, r0, M);
}
__device__ __forceinline__ void mvc_q6_k(const uint8_t* W, i64 ws, uint8_t* xs, float* D, int M, int K, int wr, const MvcNorm& nm,
                                         const float wv[8]) {
    const int lane = threadIdx.x & 31, t = lane & 3, h = t >> 1, g = t & 1, nb = K / 256;
    const int r0 = wr * Q6K_R1;
    const uint8_t* w[Q6K_R1];
#pragma unroll
    for (int i = 0; i < Q6K_R1; i++) w[i] = W + (i64)min(r0 + i, M - 1) * ws;
    uint4 qa[Q6K_R1], qb[Q6K_R1], qh[Q6K_R1];
    uint2 sc[Q6K_R1];
    uint16_t dw[Q6K_R1];
    int ib = lane >> 2;
#define MVC_Q6K_LOAD(QA, QB, QH, SC, DW, IB)                                 \
    _Pragma("unroll") for (int i = 0; i < Q6K_R1; i++) {                    \
        const uint8_t* ql = w[i] + 128 * (IB) + 64 * h + 16 * g;            \
        QA[i] = ldw16<false>(ql), QB[i] = ldw16<false>(ql + 32);            \
        QH[i] = ldw16<false>(w[i] + 128 * nb + 64 * (IB) + 32 * h + 16 * g); \
        SC[i] = ldw8<false>(w[i] + 192 * nb + 16 * (IB) + 8 * h);           \
        DW[i] = ldw2<false>(w[i] + 208 * nb + 2 * (IB));                    \
    }
    if (ib < nb) { MVC_Q6K_LOAD(qa, qb, qh, sc, dw, ib) }
    const uint8_t* X = mvc_ready(xs, nm, wv, 1);
    float acc[Q6K_R1];
#pragma unroll
    for (int i = 0; i < Q6K_R1; i++) acc[i] = 0;
    for (; ib < nb; ib += 8) {
        uint4 na[Q6K_R1], nq[Q6K_R1], nh[Q6K_R1];
        uint2 nsc[Q6K_R1];
        uint16_t ndw[Q6K_R1];
        if (ib + 8 < nb) { MVC_Q6K_LOAD(na, nq, nh, nsc, ndw, ib + 8) }
        const uint8_t* xb = X + 256 * ib + 128 * h + 16 * g;
        const int sw = ((ib & 1) << 1) | h;
        int4 xv[4];
#pragma unroll
        for (int s = 0; s < 4; s++) xv[s] = *(const int4*)(xb + 32 * (s ^ sw));
        const float yd = ((const float*)(X + K))[ib];
#pragma unroll
        for (int i = 0; i < Q6K_R1; i++) {
            acc[i] += q6k_part(qa[i], qb[i], qh[i], sc[i], dw[i], xv, g, yd);
            qa[i] = na[i], qb[i] = nq[i], qh[i] = nh[i], sc[i] = nsc[i], dw[i] = ndw[i];
        }
    }
#undef MVC_Q6K_LOAD
    mv1_store<Q6K_R1>(acc, D, r0, M);
}

// mvc_multi: mmv_multi's grid (the products' row blocks one after the other, M = 0 for
// none) padded to whole clusters; the padding blocks only make the row with the others.
__global__ void __launch_bounds__(128) mvc_multi(int K, const uint8_t* W0, i64 ws0, float* D0, int M0, int t0, const uint8_t* W1,
                                                 i64 ws1, float* D1, int M1, int t1, const uint8_t* W2, i64 ws2, float* D2, int M2,
                                                 int t2, MvcNorm nm) {
    extern __shared__ __align__(16) uint8_t mv1_x[];
    float wv[8];
    mvc_weights(nm, wv);
    int b = blockIdx.x;
    const int rpb0 = mv1_rows(t0), rpb1 = mv1_rows(t1), rpb2 = mv1_rows(t2);
    const int nb0 = (M0 + rpb0 - 1) / rpb0, nb1 = (M1 + rpb1 - 1) / rpb1, nb2 = (M2 + rpb2 - 1) / rpb2;
    const uint8_t* W = W0;
    i64 ws = ws0;
    float* D = D0;
    int M = M0, T = t0;
    if (b >= nb0 + nb1 + nb2) {
        mvc_ready(mv1_x, nm, wv, 0);
        return;
    }
    if (b >= nb0 + nb1) {
        b -= nb0 + nb1;
        W = W2; ws = ws2; D = D2; M = M2; T = t2;
    } else if (b >= nb0) {
        b -= nb0;
        W = W1; ws = ws1; D = D1; M = M1; T = t1;
    }
    const int wr = b * 4 + (int)(threadIdx.x >> 5);
    if (T == T_Q4_K)
        mvc_q4_k(W, ws, mv1_x, D, M, K, wr, nm, wv);
    else
        mvc_q6_k(W, ws, mv1_x, D, M, K, wr, nm, wv);
}

// launch_cluster: launch_smem with clusters of MVC_CL blocks (and PDL).
template <typename Kf, typename... A>
static void launch_cluster(cudaStream_t s, Kf k, int grid, int block, int smem, A... a) {
    launch_cl(s, k, dim3((grid + MVC_CL - 1) / MVC_CL * MVC_CL), block, smem, MVC_CL, a...);
}
