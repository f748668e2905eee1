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

// mvl_lg: a producer before a norm (O, down): its rows, then warp 0's tail over them.
template <int T>
__global__ void __launch_bounds__(128) mvl_lg(const uint8_t* W, i64 ws, const uint8_t* X, float* D, int M, int K, LocalArgs la) {
    pdl_defer();
    mv1<T, true>(W, ws, X, D, M, K, blockIdx.x);
    constexpr int rpb = T == T_Q4_K ? 4 * Q4K_R1 : 4 * Q6K_R1;
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
