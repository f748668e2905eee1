// ah1.cuh: a batch-1 decode step's attention half of Llama-3.1-8B in one launch (Q/K/V
// products, RoPE, the new cache rows, the attention and the output projection's partial
// sums), for build/micro/ah1.cu. Include after matmul.cu and ops.cu (mv1.cuh's lanes,
// rope_table) and micro.cuh (ld_acquire).
//
// Why: in the engine's chain (s69-call1's timeline, tg64) the attention half takes ~18.7
// us a layer (norm 3.3, Q/K/V 6.1, rope2_set 1.8, attention 4.9, O 3.7) for ~25 MB of
// weights, ~6.5 us of bytes; three of its five launches (rope2_set, the attention, O)
// wait for a whole grid each while HBM idles. Here the only waits are between the 2 NB
// blocks of one KV head (a counter in global memory), and O's first weights are in
// registers before the attention runs. Include after micro.cuh (count_meet).
//
// Grid: 16 head pairs x NB blocks of 256 threads. Pair pr (query heads 2 pr and 2 pr + 1,
// KV head g = pr / 2, half hf = pr % 2 of its rows) block r:
//   1. Q/K/V: query rows 256 pr + QR r .. + QR, key and value rows 128 g + 64 hf + KR r ..
//      + KR, as tasks of four Q4_K rows (Q, K) and two Q6_K rows (V) a warp, mv1's lanes
//      and sums (so mmv_multi's bits), the next step's weights loaded before the current
//      one is summed across tasks too; the first step before the PDL wait.
//   2. RoPE (rope_table before the wait, rope_heads' formula, adjacent pairs: Llama's),
//      the rotated query rows to q, the key and value rows to the F16 caches at the new
//      position's row (rope2_set's bytes), then O's first AH_OD steps of weights.
//   3. The 2 NB blocks of KV head g meet on flags[g] (a monotonic count: launch k's
//      blocks wait for 2 NB (k + 1)).
//   4. The pair's two heads' attention over positions 0 .. pos, redundantly in each of
//      the pair's NB blocks (no exchange): scores a position a thread (f32), softmax, P V,
//      the 256 outputs rounded to one Q8_K block (q8k_quant_warp: the chain's rounding of
//      that block when the outputs agree). At most AH_NMAX positions.
//   5. O's rows OR r .. + OR over the pair's 256 columns (its Q4_K block), a partial sum
//      a row into P[pr]; the last of a row range's 16 blocks (cnt[r], monotonic) adds the
//      16 partials in pair order into dst.
#pragma once

#define AH_HD 128   // head dims
#define AH_E 4096   // the row (Llama-3.1-8B)
#define AH_NMAX 256 // positions
#ifndef AH_OD
#define AH_OD 4  // O's steps of weights in flight (loaded before the meet)
#endif
#define AH_XB (Q8K_BSUMS(AH_E) + 4 * (AH_E / 16))  // the staged Q8_K input row's bytes

// AhW is a lane's weights of one row's step (Q4_K: header, two quant chunks; Q6_K: ql,
// ql + 32, qh, the scales and d of mv1's planar layout).
struct AhW {
    uint4 a, b, c;
    uint2 sc;
    uint16_t dw;
};

template <int NB>
struct AhPlan {
    static constexpr int QR = 2 * AH_HD / NB;  // query rows a block
    static constexpr int KR = AH_HD / 2 / NB;  // key rows and value rows a block
    static constexpr int QT = QR / 4, KT = KR / 4, VT = KR / 2, NT = QT + KT + VT;
    static constexpr int OR = AH_E / NB;  // O rows a block
    static constexpr int OS = OR / 64;    // O's steps (64 rows a step: 8 a warp)
    static_assert(KR % 4 == 0 && OS >= AH_OD, "ah1: NB must be 8 or 16");
};

// ah_load: task's step s weights (Q4_K: four rows; Q6_K: two).
template <int NB>
__device__ __forceinline__ void ah_load(int task, int s, const uint8_t* Wq, const uint8_t* Wk, const uint8_t* Wv, int q0, int k0, AhW (&w)[4]) {
    using P = AhPlan<NB>;
    const int lane = threadIdx.x & 31, c = lane & 3, ib = (lane >> 2) + 8 * s, nb = AH_E / 256;
    if (task < P::QT + P::KT) {
        const bool isq = task < P::QT;
        const uint8_t* base = isq ? Wq + (i64)(q0 + 4 * task) * (144 * nb) : Wk + (i64)(k0 + 4 * (task - P::QT)) * (144 * nb);
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const uint8_t* p = base + (i64)i * (144 * nb) + 144 * ib;
            w[i].a = ldw16<false>(p), w[i].b = ldw16<false>(p + 16 + 32 * c), w[i].c = ldw16<false>(p + 32 + 32 * c);
        }
    } else {
        const int h = c >> 1, g = c & 1;
        const uint8_t* base = Wv + (i64)(k0 + 2 * (task - P::QT - P::KT)) * (210 * nb);
#pragma unroll
        for (int i = 0; i < 2; i++) {
            const uint8_t* row = base + (i64)i * (210 * nb);
            const uint8_t* ql = row + 128 * ib + 64 * h + 16 * g;
            w[i].a = ldw16<false>(ql), w[i].b = ldw16<false>(ql + 32);
            w[i].c = ldw16<false>(row + 128 * nb + 64 * ib + 32 * h + 16 * g);
            w[i].sc = ldw8<false>(row + 192 * nb + 16 * ib + 8 * h);
            w[i].dw = ldw2<false>(row + 208 * nb + 2 * ib);
        }
    }
}

// ah_sum adds task's step s terms to acc (mv1_q4_k's and mv1_q6_k's formulas).
template <int NB>
__device__ __forceinline__ void ah_sum(int task, int s, const AhW (&w)[4], const uint8_t* xs, const uint8_t* X, float (&acc)[4]) {
    using P = AhPlan<NB>;
    const int lane = threadIdx.x & 31, c = lane & 3, ib = (lane >> 2) + 8 * s;
    if (task < P::QT + P::KT) {
        int xv[16];
        float yd;
        int4 bs;
        q4k_x(xs, AH_E, ib, c, true, xv, &yd, &bs);
#pragma unroll
        for (int i = 0; i < 4; i++) {
            int sb;
            const int sa = q4k_dot(w[i].b, w[i].c, xv, &sb);
            acc[i] += q4k_part(w[i].a, c, sa, sb, yd, bs);
        }
    } else {
        int4 xv[4];
        const float yd = q6k_x<false>(X, AH_E, ib, c >> 1, c & 1, xv);
#pragma unroll
        for (int i = 0; i < 2; i++) acc[i] += q6k_part(w[i].a, w[i].b, w[i].c, w[i].sc, w[i].dw, xv, c & 1, yd);
    }
}

// ah_oload: O's step j weights of the block's rows (a lane: chunk lane % 4 of row
// o0 + 64 j + 8 warp + lane / 4, block pr of the row).
__device__ __forceinline__ void ah_oload(const uint8_t* Wo, int o0, int j, int pr, AhW& w) {
    const int lane = threadIdx.x & 31, c = lane & 3;
    const uint8_t* p = Wo + (i64)(o0 + 64 * j + 8 * (threadIdx.x >> 5) + (lane >> 2)) * (144 * (AH_E / 256)) + 144 * pr;
    w.a = ldw16<false>(p), w.b = ldw16<false>(p + 16 + 32 * c), w.c = ldw16<false>(p + 32 + 32 * c);
}

#define AH1_ARGS                                                                                                          \
    const uint8_t *X, const uint8_t *Wq, const uint8_t *Wk, const uint8_t *Wv, const uint8_t *Wo, float *q, uint16_t *kc, \
        uint16_t *vc, const int *pos, const int *tab, float theta_scale, float scale, float *att, float *P, float *dst,   \
        unsigned *flags, unsigned *cnt

// AhNorm: what ah1_8f's last block does after the rest, the chain's next launch
// (add_rms_norm_q8_k_1: resid += dst, its RMS norm times nw into normed and, rounded to
// Q8_K, into out); cnt counts the row ranges' last blocks (never reset).
struct AhNorm {
    float *resid, *normed;
    const float* nw;
    uint8_t* out;
    unsigned* cnt;
    float eps;
};

template <int NB, bool ATT, bool FOLD = false, bool CL = false>
__device__ __forceinline__ void ah1_body(AH1_ARGS, AhNorm nm = {}) {
    using PL = AhPlan<NB>;
    __shared__ __align__(16) uint8_t xs[AH_XB];  // the input row (swizzled for q4k_x)
    __shared__ float sq[PL::QR], sk[PL::KR], sv[PL::KR], cs[AH_HD];
    __shared__ __align__(16) float qp[2 * AH_HD];  // the pair's rotated query heads
    __shared__ float ps[2][AH_NMAX], red[4][2 * AH_HD], rr[8];
    __shared__ int crow[AH_NMAX];
    __shared__ __align__(16) uint8_t xa[Q8K_BSUMS(256) + 64];  // the pair's outputs, one Q8_K block
    __shared__ int last;
    const int pr = blockIdx.x / NB, r = blockIdx.x % NB, g = pr / 2, hf = pr % 2;
    const int lane = threadIdx.x & 31, wp = threadIdx.x >> 5;
    const int q0 = 256 * pr + PL::QR * r, k0 = 128 * g + 64 * hf + PL::KR * r;
    const int p = pos[0], n = p + 1;
    // 1. Q/K/V
    int task = wp, s = 0;
    AhW cur[4], nxt[4];
    if (task < PL::NT) ah_load<NB>(task, 0, Wq, Wk, Wv, q0, k0, cur);
    rope_table(cs, p, AH_HD / 2, theta_scale, 1.0f, nullptr, 0.0f, 0.0f, 0.0f, 1.0f);  // the host's position only
    pdl_wait();
    mv1_stage(xs, X, AH_XB, AH_E, 0);
    mv1_wait();
    float acc[4] = {0, 0, 0, 0};
    while (task < PL::NT) {
        const int ntask = s == 1 ? task + 8 : task, ns = s ^ 1;
        if (ntask < PL::NT) ah_load<NB>(ntask, ns, Wq, Wk, Wv, q0, k0, nxt);
        ah_sum<NB>(task, s, cur, xs, X, acc);
        if (s == 1) {
            const bool isv = task >= PL::QT + PL::KT;
            float* o = task < PL::QT ? sq + 4 * task : isv ? sv + 2 * (task - PL::QT - PL::KT) : sk + 4 * (task - PL::QT);
#pragma unroll
            for (int i = 0; i < 4; i++) {
                if (isv && i >= 2) break;  // warp-uniform
                const float v = warp_sum(acc[i]);
                if (lane == 0) o[i] = v;
                acc[i] = 0;
            }
        }
#pragma unroll
        for (int i = 0; i < 4; i++) cur[i] = nxt[i];
        task = ntask, s = ns;
    }
    __syncthreads();
    // 2. RoPE (adjacent pairs), the rotated query rows, the new cache rows
    const int cr = tab[p / 16] * 16 + p % 16, dq = q0 % AH_HD, dk = k0 % AH_HD;
    for (int i = threadIdx.x; i < PL::QR / 2 + PL::KR / 2; i += blockDim.x) {
        const bool isk = i >= PL::QR / 2;
        const int j = isk ? i - PL::QR / 2 : i, kk = ((isk ? dk : dq) >> 1) + j;
        float* row = isk ? sk : sq;
        const float c = cs[2 * kk], sn = cs[2 * kk + 1], x0 = row[2 * j], x1 = row[2 * j + 1];
        const float y0 = x0 * c - x1 * sn, y1 = x0 * sn + x1 * c;
        if (isk) {
            kc[(i64)cr * 1024 + k0 + 2 * j] = f2h(y0), kc[(i64)cr * 1024 + k0 + 2 * j + 1] = f2h(y1);
        } else {
            q[q0 + 2 * j] = y0, q[q0 + 2 * j + 1] = y1;
        }
    }
    for (int i = threadIdx.x; i < PL::KR; i += blockDim.x) vc[(i64)cr * 1024 + k0 + i] = f2h(sv[i]);
    AhW ow[AH_OD];
#pragma unroll
    for (int j = 0; j < AH_OD; j++) ah_oload(Wo, PL::OR * r, j, pr, ow[j]);
    // 3. the KV head's blocks meet
    if constexpr (CL) cluster_sync();  // ah1_8c: the KV head's 16 blocks are one cluster
    else count_meet(flags + g, 2 * NB);
    // 4. attention: scores (a position a thread), softmax, P V (a dim pair and a quarter of
    // the positions a thread), one Q8_K block
    qp[threadIdx.x] = __ldcg(q + 256 * pr + threadIdx.x);
    __syncthreads();
    if constexpr (ATT) {
        float sa = -INFINITY, sb = -INFINITY;
        if ((int)threadIdx.x < n) {
            const int t = threadIdx.x, rw = tab[t / 16] * 16 + t % 16;
            crow[t] = rw;
            const uint4* kr = (const uint4*)(kc + (i64)rw * 1024 + 128 * g);
            float a0 = 0, b0 = 0;
#pragma unroll 4
            for (int d8 = 0; d8 < AH_HD / 8; d8++) {
                const uint4 u = __ldcg(kr + d8);
                const uint32_t wv[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const float k0f = h2f(wv[e] & 0xffff), k1f = h2f(wv[e] >> 16);
                    const int d = 8 * d8 + 2 * e;
                    a0 += qp[d] * k0f + qp[d + 1] * k1f;
                    b0 += qp[AH_HD + d] * k0f + qp[AH_HD + d + 1] * k1f;
                }
            }
            sa = a0 * scale, sb = b0 * scale;
        }
        const float ma = block_max(sa, rr), mb = block_max(sb, rr);
        const float ea = (int)threadIdx.x < n ? expf(sa - ma) : 0.0f, eb = (int)threadIdx.x < n ? expf(sb - mb) : 0.0f;
        const float la = block_sum(ea, rr), lb = block_sum(eb, rr);
        if ((int)threadIdx.x < n) ps[0][threadIdx.x] = ea / la, ps[1][threadIdx.x] = eb / lb;
        __syncthreads();
        {
            const int dp = threadIdx.x & 63, qq = threadIdx.x >> 6;
            float oa0 = 0, oa1 = 0, ob0 = 0, ob1 = 0;
            for (int t = qq; t < n; t += 4) {
                const uint32_t vv = __ldcg((const unsigned*)(vc + (i64)crow[t] * 1024 + 128 * g) + dp);
                const float v0 = h2f(vv & 0xffff), v1 = h2f(vv >> 16), pa = ps[0][t], pb = ps[1][t];
                oa0 += pa * v0, oa1 += pa * v1, ob0 += pb * v0, ob1 += pb * v1;
            }
            red[qq][2 * dp] = oa0, red[qq][2 * dp + 1] = oa1, red[qq][AH_HD + 2 * dp] = ob0, red[qq][AH_HD + 2 * dp + 1] = ob1;
        }
        __syncthreads();
    }
    if (wp == 0) {
        float v[8];
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const int j = 8 * lane + i;
            v[i] = ATT ? red[0][j] + red[1][j] + red[2][j] + red[3][j] : qp[j];  // (no attention: the query itself)
            if (r == 0) att[256 * pr + j] = v[i];
        }
        q8k_quant_warp(v, xa, 0, 256);
    }
    __syncthreads();
    // 5. O's partial sums over the pair's block; the last block of a row range adds them
    {
        const int c = lane & 3;
        int xv[16];
        float yd;
        int4 bs;
        q4k_x(xa, 256, 0, c, false, xv, &yd, &bs);
        float* pp = P + (i64)pr * AH_E + PL::OR * r + 8 * wp + (lane >> 2);
#pragma unroll
        for (int j0 = 0; j0 < PL::OS; j0 += AH_OD) {
#pragma unroll
            for (int u = 0; u < AH_OD; u++) {
                const int j = j0 + u;
                if (j >= PL::OS) break;
                int s2;
                const int s1 = q4k_dot(ow[u].b, ow[u].c, xv, &s2);
                float v = q4k_part(ow[u].a, c, s1, s2, yd, bs);
                v += __shfl_xor_sync(0xffffffffu, v, 1);
                v += __shfl_xor_sync(0xffffffffu, v, 2);
                if (c == 0) pp[64 * j] = v;
                if (j + AH_OD < PL::OS) ah_oload(Wo, PL::OR * r, j + AH_OD, pr, ow[u]);
            }
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned old;
        asm volatile("fence.acq_rel.gpu;" ::: "memory");
        asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(cnt + r) : "memory");
        last = old % 16 == 15;
        if (last) asm volatile("fence.acq_rel.gpu;" ::: "memory");
    }
    __syncthreads();
    if (last)
        for (int i = threadIdx.x; i < PL::OR; i += blockDim.x) {
            const int row = PL::OR * r + i;
            float v = __ldcg(P + row);
#pragma unroll
            for (int k = 1; k < 16; k++) v += __ldcg(P + (i64)k * AH_E + row);
            dst[row] = v;
        }
    if constexpr (FOLD) {  // the last of the row ranges' last blocks: the next norm
        __shared__ int lastall;
        __shared__ __align__(16) float nxs[AH_E];
        __shared__ double part[8];
        if (!last) return;
        __syncthreads();
        if (threadIdx.x == 0) {
            unsigned old;
            asm volatile("fence.acq_rel.gpu;" ::: "memory");
            asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(nm.cnt) : "memory");
            lastall = old % NB == NB - 1;
            if (lastall) asm volatile("fence.acq_rel.gpu;" ::: "memory");
        }
        __syncthreads();
        if (lastall) norm1_row<AH_E / 256, true>(nm.resid, nm.resid, dst, nm.normed, nm.nw, AH_E, nm.eps, nm.out, nxs, part);
    }
}

extern "C" __global__ void __launch_bounds__(256, 1) ah1_8(AH1_ARGS) {
    ah1_body<8, true>(X, Wq, Wk, Wv, Wo, q, kc, vc, pos, tab, theta_scale, scale, att, P, dst, flags, cnt);
}
extern "C" __global__ void __launch_bounds__(256, 2) ah1_16(AH1_ARGS) {
    ah1_body<16, true>(X, Wq, Wk, Wv, Wo, q, kc, vc, pos, tab, theta_scale, scale, att, P, dst, flags, cnt);
}
// ah1_8n is ah1_8 without the attention (the rounded query stands in for its outputs):
// what the attention costs inside the launch.
extern "C" __global__ void __launch_bounds__(256, 1) ah1_8n(AH1_ARGS) {
    ah1_body<8, false>(X, Wq, Wk, Wv, Wo, q, kc, vc, pos, tab, theta_scale, scale, att, P, dst, flags, cnt);
}
// ah1_8f is ah1_8 with the next add_rms_norm_q8_k_1 done by its last block (no launch
// of its own).
extern "C" __global__ void __launch_bounds__(256, 1) ah1_8f(AH1_ARGS, AhNorm nm) {
    ah1_body<8, true, true>(X, Wq, Wk, Wv, Wo, q, kc, vc, pos, tab, theta_scale, scale, att, P, dst, flags, cnt, nm);
}
// ah1_8c is ah1_8 with each KV head's 16 blocks one cluster (a non-portable size), meeting
// at a cluster barrier instead of on a counter in global memory (no fence or atomic
// before the attention); two blocks an SM (128 registers), so a cluster takes 8 SMs.
extern "C" __global__ void __launch_bounds__(256, 2) ah1_8c(AH1_ARGS) {
    ah1_body<8, true, false, true>(X, Wq, Wk, Wv, Wo, q, kc, vc, pos, tab, theta_scale, scale, att, P, dst, flags, cnt);
}
