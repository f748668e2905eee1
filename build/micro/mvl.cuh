// mvl.cuh (session 104): an eighth place for a decode step's norm and SwiGLU, local
// tails. Session 91's mvg.cuh factored the norm's scale out (the rounding of RMSNorm(x) *
// w is that of x * w with every block scale times the row's 1/rms) but kept Q8_K's
// 256-element blocks, which span 16 producer blocks, so a group needed an arrival
// counter (a returned atomic: ~3.9 us a product, session 91) or a counted handoff (mvx,
// session 93: -0.28 ms). Here the activation's blocks are as small as a producer block's
// rows (16 Q4_K rows, 8 Q6_K rows: one scale a group, as Q8_1's 32), so every producer
// block rounds its own rows after its own dot products: no counter, no fence, no kernel.
//   O and down (mvl_lg): r += the block's rows, their sum of squares into parts[block],
//            x * w rounded to int8 with one float scale a group (the block's rows);
//   gate/up (mvl_gu): one launch whose blocks take 8 gate and 8 up rows of the same
//            hidden values (warps 0-1 gate, 2-3 up), then SwiGLU of those 8 and their
//            rounding;
//   the consumers (Q/K/V, gate/up, the head) multiply their outputs by the norm's
//            scale, which the producer's parts give (PARTS=1: read at the block's end,
//            after its products; an engine form would read them beside the activation
//            row after the wait; PARTS=0 leaves the read out: the two bound it).
// Timing only, as mvg.cuh: the consumers read the chain's Q8_K rows x4 and x14 as
// before (an engine form would read the grouped rows, with a float scale a group in its
// dots), so the figures say what the boundaries and tails cost, not the new dots.
#pragma once

struct LocalArgs {
    float* r;        // the residual row: r += the product's output, in place
    const float* w;  // the norm's weights
    uint8_t* xq;     // x * w rounded: int8 values (cols), then a float scale a group
    double* parts;   // a producer block's sum of squares
    int np;          // the consumer's: parts written by the producer before it
    float* gdst;     // SwiGLU's f32 row
    uint8_t* gx;     // its rounding (int8 values, then a float scale a group of 8)
    int cols, gcols;
    float eps;
};

// mvl_round rounds warp lane values v (lanes >= G hold 0) in groups of G lanes: value j
// of the row to q[j], the group's scale to dsc[j / G].
template <int G>
__device__ __forceinline__ void mvl_round(float v, int j, bool on, uint8_t* q, float* dsc) {
    const int lane = threadIdx.x & 31;
    float a = fabsf(v);
#pragma unroll
    for (int o = G / 2; o > 0; o >>= 1) a = fmaxf(a, __shfl_xor_sync(0xffffffffu, a, o));
    const float d = a / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
    if (on) q[j] = (uint8_t)(int8_t)(int)roundf(v * id);
    if (on && lane % G == 0) dsc[j / G] = d;
}

// mvl_s: the norm's scale from the producer's np parts (every thread; one barrier).
__device__ __forceinline__ float mvl_s(const LocalArgs& la) {
    __shared__ double red[4];
    double ss = 0;
    for (int i = threadIdx.x; i < la.np; i += 128) ss += __ldcg(la.parts + i);
    ss = warp_sumd(ss);
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = ss;
    __syncthreads();
    return rms_scale(red, 4, la.cols, la.eps);
}

// mvl_norm_tail: after a producer block's rows (rpb of them) are written, warp 0 adds
// them to the residual, writes their sum of squares to parts[block] and rounds x * w in
// the block's group. Every thread of the block calls it (one barrier).
template <int rpb>
__device__ __forceinline__ void mvl_norm_tail(const float* D, int M, const LocalArgs& la) {
    __syncthreads();  // the block's rows, written by its four warps
    if (threadIdx.x >= 32) return;
    const int lane = threadIdx.x, j = (int)blockIdx.x * rpb + lane;
    const bool on = lane < rpb && j < M;
    float s = 0.0f, v = 0.0f;
    if (on) {
        s = D[j] + la.r[j];
        la.r[j] = s;
        v = s * la.w[j];
    }
    double ss = warp_sumd((double)s * (double)s);
    if (lane == 0) la.parts[blockIdx.x] = ss;
    mvl_round<rpb>(v, j, on, la.xq, (float*)(la.xq + M));
}

// mvl_swiglu_tail: after a gate/up block's 8 gate and 8 up rows from hidden value h0 are
// written (and a barrier), warp 0 computes SwiGLU of the 8 times the norm's scale s and
// rounds them in one group.
__device__ __forceinline__ void mvl_swiglu_tail(const float* Dg, const float* Du, int h0, int M, float s, const LocalArgs& la) {
    if (threadIdx.x >= 32) return;
    const int lane = threadIdx.x, j = h0 + lane;
    const bool on = lane < 8 && j < M;
    float v = 0.0f;
    if (on) {
        const float g = Dg[j] * s, u = Du[j] * s;
        v = g / (1.0f + (float)exp(-(double)g)) * u;
        la.gdst[j] = v;
    }
    mvl_round<8>(v, j, on, la.gx, (float*)(la.gx + M));
}

// mvl_lg: a producer before a norm (O, down): its rows, then warp 0's tail over them.
template <int T>
__global__ void __launch_bounds__(128) mvl_lg(const uint8_t* W, i64 ws, const uint8_t* X, float* D, int M, int K, LocalArgs la) {
    pdl_defer();
    mv1<T, true>(W, ws, X, D, M, K, blockIdx.x);
    constexpr int rpb = T == T_Q4_K ? 4 * Q4K_R1 : 4 * Q6K_R1;
    mvl_norm_tail<rpb>(D, M, la);
}

// mvl_rescale: the consumer block's rows [r0, r0 + n) of D times the norm's scale.
__device__ __forceinline__ void mvl_rescale(const LocalArgs& la, float* D, int r0, int n, int M) {
    const float s = mvl_s(la);  // its barrier also orders the block's writes of D
    const int t = threadIdx.x;
    if (t < n && r0 + t < M) D[r0 + t] *= s;
}

// mvl_multi: mmv_multi (Q/K/V) with the norm's scale applied (PARTS).
template <bool PARTS>
__global__ void __launch_bounds__(128) mvl_multi(MMV_MULTI_ARGS, LocalArgs la) {
    pdl_defer();
    mmv_multi_body<0, false>(X, xstride, K, W0, ws0, D0, M0, t0, W1, ws1, D1, M1, t1, W2, ws2, D2, M2, t2);
    if (!PARTS) return;
    int b = blockIdx.x;
    const int rpb0 = mv1_rows(t0), rpb1 = mv1_rows(t1), rpb2 = mv1_rows(t2);
    const int nb0 = (M0 + rpb0 - 1) / rpb0, nb1 = (M1 + rpb1 - 1) / rpb1;
    if (b < nb0) mvl_rescale(la, D0, b * rpb0, rpb0, M0);
    else if (b < nb0 + nb1) mvl_rescale(la, D1, (b - nb0) * rpb1, rpb1, M1);
    else mvl_rescale(la, D2, (b - nb0 - nb1) * rpb2, rpb2, M2);
}

// mvl_one: a single consumer product (the head) with the norm's scale applied (PARTS).
template <int T, bool PARTS>
__global__ void __launch_bounds__(128) mvl_one(const uint8_t* W, i64 ws, const uint8_t* X, float* D, int M, int K, LocalArgs la) {
    pdl_defer();
    mv1<T, true>(W, ws, X, D, M, K, blockIdx.x);
    constexpr int rpb = T == T_Q4_K ? 4 * Q4K_R1 : 4 * Q6K_R1;
    if (PARTS) mvl_rescale(la, D, (int)blockIdx.x * rpb, rpb, M);
}

// mvl_gu: gate/up (Q4_K) in blocks of 8 gate rows (warps 0-1) and the same 8 up rows
// (warps 2-3): mv1's warp w of row block 0 takes rows 4w .. 4w + 3 of the pointers it is
// given, so each half gets its matrix from the block's first hidden value on; then warp
// 0 computes SwiGLU of the 8 values (times the norm's scale, PARTS) and rounds them.
template <bool PARTS>
__global__ void __launch_bounds__(128) mvl_gu(const uint8_t* Wg, const uint8_t* Wu, i64 ws, const uint8_t* X, float* Dg, float* Du, int M,
                                             int K, LocalArgs la) {
    pdl_defer();
    const int h0 = 8 * (int)blockIdx.x;  // the block's first hidden value
    // warps 2-3 take rows 8 .. 15 of what they are given: up's rows h0 ..; one call site,
    // so that mv1's barriers are the same instructions for every warp
    const bool up = threadIdx.x >= 64;
    mv1<T_Q4_K, true>(up ? Wu + (i64)(h0 - 8) * ws : Wg + (i64)h0 * ws, ws, X, up ? Du + h0 - 8 : Dg + h0, up ? M - h0 + 8 : M - h0, K, 0);
    const float s = PARTS ? mvl_s(la) : 1.0f;
    if (!PARTS) __syncthreads();
    mvl_swiglu_tail(Dg, Du, h0, M, s, la);
}

// ---- NORM=13: the consumers' dots over grouped rows (timing; session 104) ----
// The grouped activation row of K values: K int8 quants (swizzled in shared memory as
// Q8_K's), then K / 8 float scales, then K / 8 floats of each group's quant sum times its
// scale (Q4_K's mins). mv1g_q4_k and mv1g_q6_k are mv1_q4_k and mv1_q6_k (same lanes,
// rows, steps and weight loads) with a float multiply-add a group of 8 instead of one
// scale a 256-value block: what an engine form's products would add to the chain.
__device__ __forceinline__ int mvg_bytes(int K) { return 2 * K; }

template <bool EF>
__device__ __forceinline__ void mv1g_q4_k(const uint8_t* W, i64 ws, const uint8_t* Xg, uint8_t* xsm, int n, float* D, int M, int K, int wr) {
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
            h[i] = ldw16<EF>(p), qa[i] = ldw16<EF>(p + 16 + 32 * c), qb[i] = ldw16<EF>(p + 32 + 32 * c);
        }
    }
    const uint8_t* X = mv1_ready<true>(Xg, xsm, n, K, 0);
    const float* ys = (const float*)(X + K);
    float acc[Q4K_R1];
#pragma unroll
    for (int i = 0; i < Q4K_R1; i++) acc[i] = 0;
    for (; ib < nb; ib += 8) {
        uint4 nh[Q4K_R1], na[Q4K_R1], nq[Q4K_R1];
        if (ib + 8 < nb) {
#pragma unroll
            for (int i = 0; i < Q4K_R1; i++) {
                const uint8_t* p = w[i] + 144 * (ib + 8);
                nh[i] = ldw16<EF>(p), na[i] = ldw16<EF>(p + 16 + 32 * c), nq[i] = ldw16<EF>(p + 32 + 32 * c);
            }
        }
        int xs[16];
        float yd;
        int4 bs;
        q4k_x(X, K, ib, c, true, xs, &yd, &bs);  // the quants (yd and bs unused)
        const int g0 = 32 * ib + 8 * c;          // the chunk's first group
        const float4 ya = *(const float4*)(ys + g0), yb = *(const float4*)(ys + g0 + 4);
        const float4 sa4 = *(const float4*)(ys + K / 8 + g0), sb4 = *(const float4*)(ys + K / 8 + g0 + 4);
        const float y[8] = {ya.x, ya.y, ya.z, ya.w, yb.x, yb.y, yb.z, yb.w};
        const float ma = sa4.x + sa4.y + sa4.z + sa4.w, mb = sb4.x + sb4.y + sb4.z + sb4.w;
#pragma unroll
        for (int i = 0; i < Q4K_R1; i++) {
            const uint32_t q[8] = {qa[i].x, qa[i].y, qa[i].z, qa[i].w, qb[i].x, qb[i].y, qb[i].z, qb[i].w};
            float A = 0.0f, B = 0.0f;
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const int lo = __dp4a((int)(q[2 * j] & 0x0f0f0f0f), xs[2 * j], __dp4a((int)(q[2 * j + 1] & 0x0f0f0f0f), xs[2 * j + 1], 0));
                const int hi = __dp4a((int)((q[2 * j] >> 4) & 0x0f0f0f0f), xs[8 + 2 * j],
                                      __dp4a((int)((q[2 * j + 1] >> 4) & 0x0f0f0f0f), xs[8 + 2 * j + 1], 0));
                A += y[j] * (float)lo, B += y[4 + j] * (float)hi;
            }
            int sc0, sc1, m0, m1;
            q4k_pair(c, h[i].y, h[i].z, h[i].w, &sc0, &sc1, &m0, &m1);
            const float d = h2f(h[i].x & 0xffff), dmin = h2f(h[i].x >> 16);
            acc[i] += d * ((float)sc0 * A + (float)sc1 * B) - dmin * ((float)m0 * ma + (float)m1 * mb);
            h[i] = nh[i], qa[i] = na[i], qb[i] = nq[i];
        }
    }
    mv1_store<Q4K_R1>(acc, D, r0, M);
}

template <bool EF>
__device__ __forceinline__ void mv1g_q6_k(const uint8_t* W, i64 ws, const uint8_t* Xg, uint8_t* xsm, int n, float* D, int M, int K, int wr) {
    const int lane = threadIdx.x & 31, t = lane & 3, h = t >> 1, g = t & 1, nb = K / 256;
    const int r0 = wr * Q6K_R1;
    const uint8_t* w[Q6K_R1];
#pragma unroll
    for (int i = 0; i < Q6K_R1; i++) w[i] = W + (i64)min(r0 + i, M - 1) * ws;
    uint4 qa[Q6K_R1], qb[Q6K_R1], qh[Q6K_R1];
    uint2 sc[Q6K_R1];
    uint16_t dw[Q6K_R1];
    int ib = lane >> 2;
#define Q6G_LOAD(QA, QB, QH, SC, DW, IB)                                          \
    _Pragma("unroll") for (int i = 0; i < Q6K_R1; i++) {                         \
        const uint8_t* ql = w[i] + 128 * (IB) + 64 * h + 16 * g;                 \
        QA[i] = ldw16<EF>(ql), QB[i] = ldw16<EF>(ql + 32);                       \
        QH[i] = ldw16<EF>(w[i] + 128 * nb + 64 * (IB) + 32 * h + 16 * g);        \
        SC[i] = ldw8<EF>(w[i] + 192 * nb + 16 * (IB) + 8 * h);                   \
        DW[i] = ldw2<EF>(w[i] + 208 * nb + 2 * (IB));                            \
    }
    if (ib < nb) { Q6G_LOAD(qa, qb, qh, sc, dw, ib) }
    const uint8_t* X = mv1_ready<true>(Xg, xsm, n, K, 1);
    const float* ys = (const float*)(X + K);
    float acc[Q6K_R1];
#pragma unroll
    for (int i = 0; i < Q6K_R1; i++) acc[i] = 0;
    for (; ib < nb; ib += 8) {
        uint4 na[Q6K_R1], nq[Q6K_R1], nh[Q6K_R1];
        uint2 nsc[Q6K_R1];
        uint16_t ndw[Q6K_R1];
        if (ib + 8 < nb) { Q6G_LOAD(na, nq, nh, nsc, ndw, ib + 8) }
        int4 xv[4];
        q6k_x<true>(X, K, ib, h, g, xv);  // the quants (the block scale unused)
        const int g0 = 32 * ib + 16 * h + 2 * g;  // chunk s's two groups: g0 + 4 s, + 1
        float ylo[4], yhi[4];
#pragma unroll
        for (int s = 0; s < 4; s++) {
            const float2 y2 = *(const float2*)(ys + g0 + 4 * s);
            ylo[s] = y2.x, yhi[s] = y2.y;
        }
#pragma unroll
        for (int i = 0; i < Q6K_R1; i++) {
            int v[4][4];
            q6k_vals(qa[i], qb[i], qh[i], v);
            const int s0 = (int8_t)(sc[i].x >> (8 * g)), s1 = (int8_t)(sc[i].x >> (8 * g + 16));
            const int s2 = (int8_t)(sc[i].y >> (8 * g)), s3 = (int8_t)(sc[i].y >> (8 * g + 16));
            const int ss[4] = {s0, s1, s2, s3};
            float r = 0.0f;
#pragma unroll
            for (int s = 0; s < 4; s++) {
                const int lo = __dp4a(v[s][0], xv[s].x, __dp4a(v[s][1], xv[s].y, 0));
                const int hi = __dp4a(v[s][2], xv[s].z, __dp4a(v[s][3], xv[s].w, 0));
                r += (float)ss[s] * (ylo[s] * (float)lo + yhi[s] * (float)hi);
            }
            acc[i] += h2f(dw[i]) * r;
            qa[i] = na[i], qb[i] = nq[i], qh[i] = nh[i], sc[i] = nsc[i], dw[i] = ndw[i];
        }
    }
#undef Q6G_LOAD
    mv1_store<Q6K_R1>(acc, D, r0, M);
}

// mv1g: mv1 (row block rb, four warps) over a grouped row.
template <int T>
__device__ __forceinline__ void mv1g(const uint8_t* W, i64 ws, const uint8_t* X, float* D, int M, int K, int rb) {
    extern __shared__ __align__(16) uint8_t mv1_x[];
    const int wr = rb * 4 + (int)(threadIdx.x >> 5);
    if (T == T_Q4_K) mv1g_q4_k<false>(W, ws, X, mv1_x, mvg_bytes(K), D, M, K, wr);
    else mv1g_q6_k<false>(W, ws, X, mv1_x, mvg_bytes(K), D, M, K, wr);
}

// The NORM=13 kernels: mvl_lg, mvl_multi (PARTS), mvl_one (PARTS) and mvl_gu (PARTS)
// with mv1g's dots.
template <int T>
__global__ void __launch_bounds__(128) mvlg_lg(const uint8_t* W, i64 ws, const uint8_t* X, float* D, int M, int K, LocalArgs la) {
    pdl_defer();
    mv1g<T>(W, ws, X, D, M, K, blockIdx.x);
    constexpr int rpb = T == T_Q4_K ? 4 * Q4K_R1 : 4 * Q6K_R1;
    mvl_norm_tail<rpb>(D, M, la);
}
__global__ void __launch_bounds__(128) mvlg_multi(MMV_MULTI_ARGS, LocalArgs la) {
    pdl_defer();
    int b = blockIdx.x;
    const int rpb0 = mv1_rows(t0), rpb1 = mv1_rows(t1), rpb2 = mv1_rows(t2);
    const int nb0 = (M0 + rpb0 - 1) / rpb0, nb1 = (M1 + rpb1 - 1) / rpb1;
    const uint8_t* W = W0;
    i64 ws = ws0;
    float* D = D0;
    int M = M0, T = t0, rpb = rpb0;
    if (b >= nb0 + nb1) b -= nb0 + nb1, W = W2, ws = ws2, D = D2, M = M2, T = t2, rpb = rpb2;
    else if (b >= nb0) b -= nb0, W = W1, ws = ws1, D = D1, M = M1, T = t1, rpb = rpb1;
    if (T == T_Q4_K) mv1g<T_Q4_K>(W, ws, X, D, M, K, b);
    else mv1g<T_Q6_K>(W, ws, X, D, M, K, b);
    mvl_rescale(la, D, b * rpb, rpb, M);
}
template <int T>
__global__ void __launch_bounds__(128) mvlg_one(const uint8_t* W, i64 ws, const uint8_t* X, float* D, int M, int K, LocalArgs la) {
    pdl_defer();
    mv1g<T>(W, ws, X, D, M, K, blockIdx.x);
    constexpr int rpb = T == T_Q4_K ? 4 * Q4K_R1 : 4 * Q6K_R1;
    mvl_rescale(la, D, (int)blockIdx.x * rpb, rpb, M);
}
__global__ void __launch_bounds__(128) mvlg_gu(const uint8_t* Wg, const uint8_t* Wu, i64 ws, const uint8_t* X, float* Dg, float* Du, int M, int K,
                                              LocalArgs la) {
    pdl_defer();
    extern __shared__ __align__(16) uint8_t mv1_x[];
    const int h0 = 8 * (int)blockIdx.x;
    const bool up = threadIdx.x >= 64;
    const int wr = (int)(threadIdx.x >> 5);
    mv1g_q4_k<false>(up ? Wu + (i64)(h0 - 8) * ws : Wg + (i64)h0 * ws, ws, X, mv1_x, mvg_bytes(K), up ? Du + h0 - 8 : Dg + h0,
                     up ? M - h0 + 8 : M - h0, K, wr);
    mvl_swiglu_tail(Dg, Du, h0, M, mvl_s(la), la);
}
