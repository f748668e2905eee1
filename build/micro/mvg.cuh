// mvg.cuh (session 91): a seventh place for a decode step's norm, with a new reason: no
// block ever runs a whole row's norm. The Q8_K rounding of RMSNorm(x) * w equals that of
// x * w scaled by the row's 1/rms in exact arithmetic (every 256-element block's largest
// magnitude and every quotient scale alike), so the product before a norm (O, down) can
// round x * w a 256-element group at a time as soon as that group's rows are out, by the
// group's last block to finish (an atomic counter a group: 16 blocks of 16 Q4_K rows, 32
// of 8 Q6_K rows), and leave the group's sum of squares beside it; whoever reads the next
// product's outputs (RoPE, SwiGLU, the head's sampler) would multiply them by the scale
// that the 16 partial sums give, in a fixed order. The norm's kernel, its boundary and
// its serial whole-row pass go; each product block gains a fence and an atomic, and each
// group's last block one warp's 256-element tail.
//   NORM=9   mv1_lg with the tail (the residual add, the partial sum of squares, the
//            rounding of x * w into the norm's own row xn);
//   NORM=10  mv1_lg's fence and counter with no tail (their cost alone).
// Timing only: the consumers read the chain's x4 as before (not xn, which NORM=9 fills
// with its own bits), and nothing applies the scale (a multiply where the consumers'
// loads already are). Compare with NORM=5 (the engine) and NORM=3 (no norm at all).
#pragma once

struct GroupArgs {
    float* r;        // the residual row: r += the product's output, in place
    const float* w;  // the norm's weights
    uint8_t* xn;     // the rounded row of x * w (Q8_K, cols wide)
    double* parts;   // a group's sum of squares
    unsigned* cnt;   // a counter a group, zero between launches (the last block zeroes it)
    int cols;
};

// tail_norm: one warp's 256-element group g of the norm's work without its scale: r +=
// a (the product's output), the group's sum of squares into parts[g], x * w rounded to
// Q8_K block g of xn. tail_swiglu: swiglu_q8_k's group g (dst, its Q8_K block g of x).
__device__ __forceinline__ void tail_norm(int g, const float* a, float* r, const float* w, uint8_t* xn, double* parts, int cols) {
    const int lane = threadIdx.x & 31, j = g * 256 + 8 * lane;
    float4 av[2], rv[2], wv[2];
#pragma unroll
    for (int h = 0; h < 2; h++)
        av[h] = __ldcg((const float4*)(a + j + 4 * h)), rv[h] = __ldcg((const float4*)(r + j + 4 * h)), wv[h] = __ldg((const float4*)(w + j + 4 * h));
    float v[8];
    double ss = 0;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const float4 s = make_float4(av[h].x + rv[h].x, av[h].y + rv[h].y, av[h].z + rv[h].z, av[h].w + rv[h].w);
        *(float4*)(r + j + 4 * h) = s;
        ss += (double)s.x * s.x + (double)s.y * s.y + (double)s.z * s.z + (double)s.w * s.w;
        v[4 * h] = s.x * wv[h].x, v[4 * h + 1] = s.y * wv[h].y, v[4 * h + 2] = s.z * wv[h].z, v[4 * h + 3] = s.w * wv[h].w;
    }
    ss = warp_sumd(ss);
    if (lane == 0) parts[g] = ss;
    q8k_quant_warp(v, xn, g, cols);
}
__device__ __forceinline__ void tail_swiglu(int g, const float* gate, const float* up, float* dst, uint8_t* x, int cols) {
    const int lane = threadIdx.x & 31, j = g * 256 + 8 * lane;
    float gv[8], uv[8], v[8];
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const float4 a = __ldcg((const float4*)(gate + j + 4 * h)), b = __ldcg((const float4*)(up + j + 4 * h));
        gv[4 * h] = a.x, gv[4 * h + 1] = a.y, gv[4 * h + 2] = a.z, gv[4 * h + 3] = a.w;
        uv[4 * h] = b.x, uv[4 * h + 1] = b.y, uv[4 * h + 2] = b.z, uv[4 * h + 3] = b.w;
    }
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const float e = (float)exp(-(double)gv[i]);
        v[i] = gv[i] / (1.0f + e) * uv[i];
    }
    *(float4*)(dst + j) = make_float4(v[0], v[1], v[2], v[3]);
    *(float4*)(dst + j + 4) = make_float4(v[4], v[5], v[6], v[7]);
    q8k_quant_warp(v, x, g, cols);
}

// arrive: a block's arrival at its group's counter, SY ways (session 91's second call):
// 1 every thread fences, a barrier, thread 0 adds (the first call's form); 2 a barrier,
// thread 0 fences and adds (cooperative groups' grid barrier does this); 3 a barrier and
// thread 0's add with no fence (not enough for the tail's reads: timing only); 4 the
// barrier alone (no counter; nobody is last); 5 a barrier, thread 0 fences and adds
// without a return value (red: nobody learns it is last, so a waiter elsewhere would have
// to watch the counter); 6 the same as one red.release.gpu.
template <int SY>
__device__ __forceinline__ bool arrive(unsigned* c, unsigned n) {
    __shared__ int last;
    if (SY == 1) __threadfence();
    __syncthreads();
    if (SY == 4) return false;
    if (SY == 5 || SY == 6) {
        if (threadIdx.x == 0) {
            if (SY == 5) {
                __threadfence();
                atomicAdd(c, 1);  // result unused: compiled to red
            } else
                asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(c) : "memory");
        }
        return false;
    }
    if (threadIdx.x == 0) {
        if (SY <= 2 && SY != 1) __threadfence();
        last = atomicAdd(c, 1) == n - 1;
    }
    __syncthreads();
    return last;
}

template <int T, bool TAIL, int SY = 1>
__global__ void __launch_bounds__(128) mv1_lg(const uint8_t* W, i64 ws, const uint8_t* X, float* D, int M, int K, GroupArgs ga) {
    pdl_defer();
    mv1<T, true>(W, ws, X, D, M, K, blockIdx.x);
    constexpr int rpb = T == T_Q4_K ? 4 * Q4K_R1 : 4 * Q6K_R1, per = 256 / rpb;
    const int g = (int)blockIdx.x / per;
    if (!arrive<SY>(ga.cnt + g, per)) return;
    if (threadIdx.x == 0) ga.cnt[g] = 0;
    if (!TAIL || threadIdx.x >= 32) return;
    __threadfence();
    tail_norm(g, D, ga.r, ga.w, ga.xn, ga.parts, ga.cols);
}

// mv1_gu (SW=2; SW=3 without the tail): the gate/up product with its SwiGLU inside.
// Blocks come in groups of 32, 16 of gate rows and 16 of up rows over the same 256
// hidden values (Q4_K, 16 rows a block), so a group's last block to finish computes
// swiglu_q8_k's 256 values of the group (its formula, its Q8_K rounding: no scale
// anywhere, so the same bits as the kernel it replaces) and swiglu_q8_k's launch goes.
struct GuArgs {
    float* dst;     // the SwiGLU row (f32), as swiglu_q8_k writes it
    uint8_t* x;     // its Q8_K rounding: the down product's row
    unsigned* cnt;  // a counter a group of 256 hidden values
    int cols;
};
template <bool TAIL, int SY = 1>
__global__ void __launch_bounds__(128) mv1_gu(const uint8_t* Wg, const uint8_t* Wu, i64 ws, const uint8_t* X, float* Dg, float* Du, int M,
                                             int K, GuArgs ga) {
    pdl_defer();
    const int g = (int)blockIdx.x / 32, k = (int)blockIdx.x % 32;
    if (k < 16)
        mv1<T_Q4_K, true>(Wg, ws, X, Dg, M, K, 16 * g + k);
    else
        mv1<T_Q4_K, true>(Wu, ws, X, Du, M, K, 16 * g + k - 16);
    if (!arrive<SY>(ga.cnt + g, 32)) return;
    if (threadIdx.x == 0) ga.cnt[g] = 0;
    if (!TAIL || threadIdx.x >= 32) return;
    __threadfence();
    tail_swiglu(g, Dg, Du, ga.dst, ga.x, ga.cols);
}
