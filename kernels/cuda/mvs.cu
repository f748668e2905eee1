// mvs.cu: batch-1 products of Q4_K, Q6_K and Q8_0 weights streamed through shared
// memory by the copy engine (sm_90 bulk copies), for decode steps.
//
// mv1 (mv1.cuh) keeps a warp's next weights in registers, so what a block has in flight
// is bounded by its registers, and a block's first loads wait for the kernel before it
// to be running no more. Here one block an SM is persistent: a producer warp copies
// tiles of NW * R contiguous weight rows (one bulk copy each) into a ring of S stages of
// shared memory, and NW consumer warps take a row each of every tile. The copies are
// issued before griddepcontrol.wait (weights only: pdl_defer), so the first S tiles of
// every SM load while the kernel before still runs; afterwards up to S tiles an SM are in
// flight whatever the registers. Stage s is full (full[s]: the copy's bytes have landed)
// and then empty (empty[s]: the NW consumer warps have read it), in turns.
//
// A row's dot is mv1's for the same row, lane by lane and in the same order (mv1_q4_k,
// mv1_q6_k, mv1_q8_0 with one row a warp), so the products are bit-equal to mv1's.
// Up to three projections of one activation row share a launch (as mmv_multi): the
// tiles of projection 0, then 1, then 2; block b takes tiles b, b + gridDim.x, ...
#include "mbar.cuh"
#include "mv1.cuh"

#define MVS_MAXS 16  // the most stages (barrier space)

__device__ __forceinline__ uint32_t mvs_sa(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

// mvs_q4_k: the dots of R Q4_K rows (shared memory, ws apart) with X (swizzled as mv1's,
// sh 0) into y; lane 0's y are the sums.
template <int R>
__device__ __forceinline__ void mvs_q4_k(const uint8_t* w, int ws, const uint8_t* X, int K, float* y) {
    const int lane = threadIdx.x & 31, c = lane & 3, nb = K / 256;
    float acc[R];
#pragma unroll
    for (int i = 0; i < R; i++) acc[i] = 0;
    for (int ib = lane >> 2; ib < nb; ib += 8) {
        int xs[16];
        float yd;
        int4 bs;
        q4k_x(X, K, ib, c, true, xs, &yd, &bs);
#pragma unroll
        for (int i = 0; i < R; i++) {
            const uint8_t* p = w + i * ws + 144 * ib;
            const uint4 h = *(const uint4*)p, qa = *(const uint4*)(p + 16 + 32 * c), qb = *(const uint4*)(p + 32 + 32 * c);
            int sb;
            const int sa = q4k_dot(qa, qb, xs, &sb);
            acc[i] += q4k_part(h, c, sa, sb, yd, bs);
        }
    }
#pragma unroll
    for (int i = 0; i < R; i++) y[i] = warp_sum(acc[i]);
}

// mvs_q6_k: the dots of R Q6_K rows (packed as mv1 reads them) with X (swizzled, sh 1).
template <int R>
__device__ __forceinline__ void mvs_q6_k(const uint8_t* w, int ws, const uint8_t* X, int K, float* y) {
    const int lane = threadIdx.x & 31, t = lane & 3, h = t >> 1, g = t & 1, nb = K / 256;
    float acc[R];
#pragma unroll
    for (int i = 0; i < R; i++) acc[i] = 0;
    for (int ib = lane >> 2; ib < nb; ib += 8) {
        const uint8_t* xb = X + 256 * ib + 128 * h + 16 * g;
        const int sw = ((ib & 1) << 1) | h;
        int4 xv[4];
#pragma unroll
        for (int s = 0; s < 4; s++) xv[s] = *(const int4*)(xb + 32 * (s ^ sw));
        const float yd = ((const float*)(X + K))[ib];
#pragma unroll
        for (int i = 0; i < R; i++) {
            const uint8_t* wr = w + i * ws;
            const uint8_t* ql = wr + 128 * ib + 64 * h + 16 * g;
            const uint4 qa = *(const uint4*)ql, qb = *(const uint4*)(ql + 32);
            const uint4 qh = *(const uint4*)(wr + 128 * nb + 64 * ib + 32 * h + 16 * g);
            const uint2 sc = *(const uint2*)(wr + 192 * nb + 16 * ib + 8 * h);
            const uint16_t dw = *(const uint16_t*)(wr + 208 * nb + 2 * ib);
            acc[i] += q6k_part(qa, qb, qh, sc, dw, xv, g, yd);
        }
    }
#pragma unroll
    for (int i = 0; i < R; i++) y[i] = warp_sum(acc[i]);
}

// mvs_q8_0: the dots of R Q8_0 rows (quants, then the scales) with X (unswizzled).
template <int R>
__device__ __forceinline__ void mvs_q8_0(const uint8_t* w, int ws, const uint8_t* X, int K, float* y) {
    const int lane = threadIdx.x & 31, half = lane & 1, nb = K / 32, nj = (nb + 15) / 16;
    float acc[R];
#pragma unroll
    for (int i = 0; i < R; i++) acc[i] = 0;
    for (int j = 0; j < nj; j++) {
        const bool ok = 16 * j + (lane >> 1) < nb;
        const int ib = min(16 * j + (lane >> 1), nb - 1);
        const int4 xv = *(const int4*)(X + 32 * ib + 16 * half);
        const float dx = ((const float*)(X + K))[ib];
#pragma unroll
        for (int i = 0; i < R; i++) {
            const int4 q = *(const int4*)(w + i * ws + 32 * ib + 16 * half);
            const uint16_t dw = *(const uint16_t*)(w + i * ws + 32 * nb + 2 * ib);
            q8_pair_acc(acc[i], q, xv, ok, half, dw, dx);
        }
    }
#pragma unroll
    for (int i = 0; i < R; i++) y[i] = warp_sum(acc[i]);
}

// mvs_tile finds global tile g among the projections: its weights, stride, output,
// first row, rows (at most NW) and type.
struct mvs_tile {
    const uint8_t* W;
    i64 ws;
    float* D;
    int r0, rows, T;
};

#define MVS_ARGS const uint8_t *X, int K, int S, int SB, const uint8_t *W0, i64 ws0, float *D0, int M0, int t0, \
                 const uint8_t *W1, i64 ws1, float *D1, int M1, int t1, const uint8_t *W2, i64 ws2, float *D2, int M2, int t2

template <int TR>
__device__ __forceinline__ mvs_tile mvs_find(int g, MVS_ARGS) {
    const int n0 = (M0 + TR - 1) / TR, n1 = (M1 + TR - 1) / TR;
    mvs_tile t;
    if (g < n0) t = {W0, ws0, D0, g * TR, M0, t0};
    else if (g < n0 + n1) t = {W1, ws1, D1, (g - n0) * TR, M1, t1};
    else t = {W2, ws2, D2, (g - n0 - n1) * TR, M2, t2};
    t.rows = min(TR, t.rows - t.r0);
    return t;
}

// mvs_norm_args: the residual add and RMS norm that mvsn computes before its products
// (add_rms_norm_q8_k's arguments, inference/backend/cuda/fuse.go), and the counter of
// blocks that have read a and b (zero between launches).
struct mvs_norm_args {
    float* sum;
    const float *a, *b;
    float* dst;
    const float* w;
    float eps;
    int* counter;
};

// mvs_put stores block ib of a Q8_K row (lane l has quants q of elements l + 32i; d its
// scale) into row x (quants swizzled by sh; negative: not), with its 16 bsums.
__device__ __forceinline__ void mvs_put(uint8_t* x, int sh, int ib, int K, float d, const int q[8]) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const int j = ib * 256 + lane + 32 * i;
        const int p = sh >= 0 ? 16 * mv1_swz(j >> 4, sh) + (j & 15) : j;
        x[p] = (uint8_t)(int8_t)q[i];
        int s = q[i];
        for (int o = 8; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if ((lane & 15) == 0) ((int*)(x + Q8K_BSUMS(K)))[ib * 16 + 2 * i + (lane >> 4)] = s;
    }
    if (lane == 0) ((float*)(x + K))[ib] = d;
}

// mvs_norm is add_rms_norm_q8_k's row in every block (NW consumer warps): the sum a + b
// into xs, its RMS norm times w rounded to Q8_K into x4 (sh 0) and/or x6 (sh 1); the last
// block to have read a and b (sum and dst may be either) writes sum, dst and the row X.
// The sum of squares is add_rms_norm_row's (256 strided double sums, warp sums, the 8 in
// order), so every value is that kernel's.
template <int NW>
__device__ __forceinline__ void mvs_norm(const mvs_norm_args& na, float* xs, uint8_t* x4, uint8_t* x6, bool has4, bool has6,
                                         uint8_t* X, int K) {
    constexpr int T = NW * 32;
    __shared__ double part[8];
    __shared__ int last;
    const int t = threadIdx.x, warp = t >> 5, lane = t & 31;
    for (int j = t; j < K; j += T) xs[j] = na.a[j] + na.b[j];
    asm volatile("bar.sync 1, %0;" ::"n"(T) : "memory");
    if (t == 0) {
        __threadfence();
        last = atomicAdd(na.counter, 1) == (int)gridDim.x - 1;
        if (last) *na.counter = 0;  // every block has counted: ready for the next launch
    }
    for (int vt = t; vt < 256; vt += T) {
        double s = 0;
        for (int j = vt; j < K; j += 256) s += (double)xs[j] * (double)xs[j];
        s = warp_sumd(s);
        if ((vt & 31) == 0) part[vt >> 5] = s;
    }
    asm volatile("bar.sync 1, %0;" ::"n"(T) : "memory");
    const float scale = rms_scale(part, 8, K, na.eps);
    const bool wr = last;
    for (int ib = warp; ib < K / 256; ib += NW) {
        float v[8], a = -2.0f, x = 0.0f;
        int idx = 0;
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const int j = ib * 256 + lane + 32 * i;
            v[i] = xs[j] * scale * na.w[j];
            float m = fabsf(v[i]);
            if (m != m) m = -1.0f;
            if (m > a) { a = m; idx = lane + 32 * i; x = v[i]; }
        }
        for (int o = 16; o > 0; o >>= 1) {
            const float a2 = __shfl_xor_sync(0xffffffffu, a, o), x2 = __shfl_xor_sync(0xffffffffu, x, o);
            const int i2 = __shfl_xor_sync(0xffffffffu, idx, o);
            if (q8k_first(a2, i2, a, idx)) { a = a2; idx = i2; x = x2; }
        }
        const float iscale = q8k_iscale(a, x), d = q8k_d(a, iscale);
        int q[8];
#pragma unroll
        for (int i = 0; i < 8; i++) q[i] = q8k_q(a, iscale, v[i]);
        if (has4) mvs_put(x4, 0, ib, K, d, q);
        if (has6) mvs_put(x6, 1, ib, K, d, q);
        if (wr) {
            mvs_put(X, -1, ib, K, d, q);
#pragma unroll
            for (int i = 0; i < 8; i++) {
                const int j = ib * 256 + lane + 32 * i;
                na.sum[j] = xs[j];
                na.dst[j] = v[i];
            }
        }
    }
    asm volatile("bar.sync 1, %0;" ::"n"(T) : "memory");
}

// Dynamic shared memory: 2 * MVS_MAXS barriers (256 bytes), then the activation row for
// Q4_K (sh 0) and for Q6_K (sh 1), or the one Q8_0 row, mv1_bytes each, then (NORM) the
// K floats of the sum, then S stages of SB bytes (SB a multiple of 128). The host
// (inference/backend/cuda/mvs.go) sizes it. NORM (mvsn, Q4_K/Q6_K only): the row X is
// computed (mvs_norm) instead of read.
template <int NW, int R, bool NORM>
__device__ __forceinline__ void mvs_body(MVS_ARGS, const mvs_norm_args& na) {
    constexpr int TR = NW * R;  // a tile's rows: R a warp
    extern __shared__ __align__(128) uint8_t mvs_sm[];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const bool q80 = t0 == T_Q8_0;
    const bool has4 = !q80 && (t0 == T_Q4_K || (M1 > 0 && t1 == T_Q4_K) || (M2 > 0 && t2 == T_Q4_K));
    const bool has6 = !q80 && (t0 == T_Q6_K || (M1 > 0 && t1 == T_Q6_K) || (M2 > 0 && t2 == T_Q6_K));
    const int n = mv1_bytes(q80 ? T_Q8_0 : T_Q4_K, K);
    uint8_t* x4 = mvs_sm + 256;                  // Q4_K's row, or Q8_0's
    uint8_t* x6 = x4 + (has4 || q80 ? n : 0);    // Q6_K's row
    float* xs = (float*)(x6 + (has6 ? n : 0));  // NORM: the sum
    uint8_t* st = (uint8_t*)xs + (NORM ? 4 * K : 0);
    st += (128 - ((uintptr_t)st & 127)) & 127;
    const uint32_t full = mvs_sa(mvs_sm), empty = full + 8 * MVS_MAXS;
    const int total = (M0 + TR - 1) / TR + (M1 + TR - 1) / TR + (M2 + TR - 1) / TR;
    if (threadIdx.x == 0) {
        for (int s = 0; s < S; s++) mbar_init(full + 8 * s, 1), mbar_init(empty + 8 * s, NW);
        mbar_fence_init();
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();
    if (warp == NW) {  // the producer: weights only, so no wait for the kernel before
        if (lane == 0) {
            int i = 0;
            for (int g = blockIdx.x; g < total; g += gridDim.x, i++) {
                const int s = i % S;
                if (i >= S) mbar_wait(empty + 8 * s, ((i / S) - 1) & 1);
                const mvs_tile t = mvs_find<TR>(g, X, K, S, SB, W0, ws0, D0, M0, t0, W1, ws1, D1, M1, t1, W2, ws2, D2, M2, t2);
                const uint32_t bytes = (uint32_t)(t.rows * t.ws);
                mbar_expect(full + 8 * s, bytes);
                bulk_g2s(mvs_sa(st + (i64)s * SB), t.W + (i64)t.r0 * t.ws, bytes, full + 8 * s);
            }
        }
        return;
    }
    pdl_wait();
    if (NORM) {
        mvs_norm<NW>(na, xs, x4, x6, has4, has6, (uint8_t*)X, K);
    } else {
    const uint32_t b4 = mvs_sa(x4), b6 = mvs_sa(x6);
    for (int q = threadIdx.x; q < n / 16; q += NW * 32) {  // the row, swizzled as mv1_stage does
        const bool qs = q < K / 16;
        if (has4 || q80)
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(b4 + 16 * (qs && !q80 ? mv1_swz(q, 0) : q)), "l"(X + 16 * q) : "memory");
        if (has6)
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(b6 + 16 * (qs ? mv1_swz(q, 1) : q)), "l"(X + 16 * q) : "memory");
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_all;" ::: "memory");
    asm volatile("bar.sync 1, %0;" ::"n"(NW * 32) : "memory");
    }
    int i = 0;
    for (int g = blockIdx.x; g < total; g += gridDim.x, i++) {
        const int s = i % S;
        mbar_wait(full + 8 * s, (i / S) & 1);
        const mvs_tile t = mvs_find<TR>(g, X, K, S, SB, W0, ws0, D0, M0, t0, W1, ws1, D1, M1, t1, W2, ws2, D2, M2, t2);
        float y[R];
        // Rows past the tile's are its last row again (a warp's loads stay in the stage).
        const int rw = min(R * warp, t.rows - 1), ws = (int)t.ws;
        const uint8_t* w = st + (i64)s * SB + (i64)rw * ws;
        const int wsr = R * warp + 1 < t.rows ? ws : 0;
        if (R * warp < t.rows) {
#ifdef MVS_NOCOMPUTE
#pragma unroll
            for (int r = 0; r < R; r++) y[r] = (float)w[lane + r * wsr];
#else
            if (t.T == T_Q4_K) mvs_q4_k<R>(w, wsr, x4, K, y);
            else if (t.T == T_Q6_K) mvs_q6_k<R>(w, wsr, x6, K, y);
            else mvs_q8_0<R>(w, wsr, x4, K, y);
#endif
        }
        __syncwarp();
        if (lane == 0) {
            mbar_arrive(empty + 8 * s);
#pragma unroll
            for (int r = 0; r < R; r++)
                if (R * warp + r < t.rows) t.D[t.r0 + R * warp + r] = y[r];
        }
    }
}

// mvs<NW>[r<R>]: NW consumer warps of R rows a tile each, and one producer warp; grid: at
// most one block an SM.
#define MVS_KERNEL(NAME, NW, R)                                                                           \
    extern "C" __global__ void __launch_bounds__(NW * 32 + 32, 1) NAME(MVS_ARGS) {                         \
        pdl_defer();                                                                                      \
        mvs_body<NW, R, false>(X, K, S, SB, W0, ws0, D0, M0, t0, W1, ws1, D1, M1, t1, W2, ws2, D2, M2, t2,  \
                               mvs_norm_args{});                                                          \
    }
MVS_KERNEL(mvs4, 4, 1)
MVS_KERNEL(mvs8, 8, 1)
MVS_KERNEL(mvs16, 16, 1)
MVS_KERNEL(mvs4r2, 4, 2)
MVS_KERNEL(mvs8r2, 8, 2)
MVS_KERNEL(mvs16r2, 16, 2)

// mvsn<NW>[r<R>]: mvs whose row X is the Q8_K rounding of RMSNorm(a + b) * w, as
// add_rms_norm_q8_k would have written it (it does, and sum and dst; fuse.go's fuseNorm).
#define MVSN_KERNEL(NAME, NW, R)                                                                          \
    extern "C" __global__ void __launch_bounds__(NW * 32 + 32, 1) NAME(MVS_ARGS, float* nsum, const float* na, \
                                                                       const float* nb, float* ndst,      \
                                                                       const float* nw, int ncols, float eps, \
                                                                       int* counter) {                    \
        pdl_defer();                                                                                      \
        mvs_body<NW, R, true>(X, K, S, SB, W0, ws0, D0, M0, t0, W1, ws1, D1, M1, t1, W2, ws2, D2, M2, t2,   \
                              mvs_norm_args{nsum, na, nb, ndst, nw, eps, counter});                       \
    }
MVSN_KERNEL(mvsn4, 4, 1)
MVSN_KERNEL(mvsn8, 8, 1)
MVSN_KERNEL(mvsn16, 16, 1)
MVSN_KERNEL(mvsn4r2, 4, 2)
MVSN_KERNEL(mvsn8r2, 8, 2)
MVSN_KERNEL(mvsn16r2, 16, 2)
