// ffn.cu: a batch-1 decode layer's feed-forward half as one launch whose down product
// starts before gate/up ends (written in session 41; run in session 42: the chain's
// bits, but 2.8x slower than the chain, 3.26 against 1.15 ms for 32 layers; NOTES.md).
//
// The chain (the engine's launches, PDL edges): mmv_multi (gate and up, 14,336 rows of
// 4,096 each), swiglu_q8_k (SwiGLU and the Q8_K rounding of the 14,336 values), then
// mmv_q4_k_1 or mmv_q6_k_1 (down, 4,096 rows of 14,336). Session 41's skip study put
// swiglu_q8_k at ~2.6 us a layer of the 8B step, and each boundary costs the product
// after it its ramp. mv1's step is eight weight blocks a row (2,048 values), so down's
// step s reads only chunk s of the SwiGLU row, which only gate and up rows 2,048s ..
// 2,048s + 2,047 make.
//
// ffn (one launch a layer, as many 128-thread blocks as are resident): each block
// computes gate and up rows in tasks of 16 (mv1_q4_k's warps and bits, the input row
// staged once a block), chunk by chunk, and owns E / G rows of down, whose sums it keeps
// in registers across the chunks (mv1's lanes and bits). The block finishing chunk c's
// last GU task (a counter) computes SwiGLU and the Q8_K rounding of the chunk
// (swiglu_q8_k's operations, so the same bits) and sets the chunk's flag; a block adds
// down's step c once that flag is set, LAG chunks after its own GU tasks of chunk c (see
// ffn for why that cannot deadlock). The last block to finish zeroes the counters for
// the next launch. Values other blocks wrote are read with ld.global.cg (L1 is not
// coherent); a wait that takes 20 ms gives up and is counted (a bug, reported, not a hang).
// A down step's weights are ~12 KB a block: read after the GU tasks, they add a round
// trip a step; DPRE=1 copies them into shared memory (cp.async) before those GU tasks.
//
// Prints the bits check (layer 0's and the last layer's down outputs and the last
// SwiGLU row, both ways) and graph times of L layers (FFN halves back to back, GAP ns
// of a spinning kernel between them where the attention half would run). NORM=1 adds
// the next norm (the residual add, RMSNorm and Q8_K rounding after down): the chain's
// add_rms_norm_q8_k_1 launch against ffn's last block doing it (ffn_norm), bits checked.
//
// nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/ffn ffn.cu && /tmp/ffn && GAP=8000 /tmp/ffn
#include "micro.cuh"
#include "../../kernels/cuda/matmul.cu"
#include "../../kernels/cuda/quant.cu"
#include "ffnhost.cuh"

#define FFN_E 4096    // the row (model width)
#define FFN_F 14336   // the hidden width
#define FFN_CH 2048   // a step's values: eight weight blocks
#define FFN_NC (FFN_F / FFN_CH)
#define FFN_GU (2 * FFN_CH / 16)  // GU tasks a chunk: gate's, then up's

struct FfnArgs {
    const uint8_t *gate, *up, *down;  // Q4_K [F][E], Q4_K [F][E], Q4_K or Q6_K (mv1's layout) [E][F]
    i64 gws, dws;                     // row bytes
    int dtype;                        // T_Q4_K or T_Q6_K
    const uint8_t* x;                 // Q8_K row of E (the normed input)
    float *g, *u;                     // F each
    uint8_t* x14;                     // Q8_K row of F (SwiGLU's)
    float* d;                         // E (down's output)
    unsigned* ctl;                    // counters: [0] blocks done, [1..NC] GU tasks done, [1+NC..2NC] chunk flags
    // NORM=1: the next layer's norm by the last block, as add_rms_norm_q8_k_1(r, d, r,
    // dst, nw, E, eps, xn) computes it (the chain launches that kernel after down)
    int norm;
    int dpre;  // DPRE=1: a down step's weights copied into shared memory while the GU tasks before it run
    float *r, *dst;
    const float* nw;
    uint8_t* xn;
    float eps;
};

// ffn_gu: rows 16 t .. 16 t + 15 of W (Q4_K, E wide) against the staged row xs (mv1's
// swizzle 0), as mv1_q4_k<true> computes them; the first GU task of a block issues its
// weight loads, then (wait: the block's first task) the PDL wait, then stages X (n bytes).
// The loop is mv1_q4_k's, copied: mv1_q4_k stages the row itself at every call, and a
// change to mv1.cuh would change every module's PTX; an engine form would give mv1_q4_k
// that choice instead.
__device__ __forceinline__ void ffn_gu(const uint8_t* W, i64 ws, const uint8_t* X, uint8_t* xs, int n, float* D, int t, bool stage,
                                       bool wait) {
    const int lane = threadIdx.x & 31, c = lane & 3, nb = FFN_E / 256;
    const int r0 = (4 * t + (int)(threadIdx.x >> 5)) * Q4K_R1;
    const uint8_t* w[Q4K_R1];
#pragma unroll
    for (int i = 0; i < Q4K_R1; i++) w[i] = W + (i64)(r0 + i) * ws;
    uint4 h[Q4K_R1], qa[Q4K_R1], qb[Q4K_R1];
    int ib = lane >> 2;
#pragma unroll
    for (int i = 0; i < Q4K_R1; i++) {
        const uint8_t* p = w[i] + 144 * ib;
        h[i] = *(const uint4*)p, qa[i] = *(const uint4*)(p + 16 + 32 * c), qb[i] = *(const uint4*)(p + 32 + 32 * c);
    }
    if (stage) {
        if (wait) pdl_wait();
        mv1_stage(xs, X, n, FFN_E, 0);
        mv1_wait();
    }
    float acc[Q4K_R1];
#pragma unroll
    for (int i = 0; i < Q4K_R1; i++) acc[i] = 0;
    for (; ib < nb; ib += 8) {
        uint4 nh[Q4K_R1], na[Q4K_R1], nq[Q4K_R1];
        if (ib + 8 < nb) {
#pragma unroll
            for (int i = 0; i < Q4K_R1; i++) {
                const uint8_t* p = w[i] + 144 * (ib + 8);
                nh[i] = *(const uint4*)p, na[i] = *(const uint4*)(p + 16 + 32 * c), nq[i] = *(const uint4*)(p + 32 + 32 * c);
            }
        }
        int xv[16];
        float yd;
        int4 bs;
        q4k_x(xs, FFN_E, ib, c, true, xv, &yd, &bs);
#pragma unroll
        for (int i = 0; i < Q4K_R1; i++) {
            int sb;
            const int sa = q4k_dot(qa[i], qb[i], xv, &sb);
            acc[i] += q4k_part(h[i], c, sa, sb, yd, bs);
            h[i] = nh[i], qa[i] = na[i], qb[i] = nq[i];
        }
    }
    mv1_store<Q4K_R1>(acc, D, r0, 1 << 30);
}

// ffn_swiglu: chunk c of SwiGLU(g, u) rounded to Q8_K into x14 (swiglu_q8_k's
// operations), two 256-value blocks a warp.
__device__ __forceinline__ void ffn_swiglu(const FfnArgs& a, int c) {
    const int lane = threadIdx.x & 31, wp = threadIdx.x >> 5;
    for (int ib = FFN_CH / 256 * c + wp; ib < FFN_CH / 256 * (c + 1); ib += 4) {
        const int j = 256 * ib + 8 * lane;
        float v[8];
#pragma unroll
        for (int q = 0; q < 2; q++) {
            const float4 gv = __ldcg((const float4*)(a.g + j) + q), uv = __ldcg((const float4*)(a.u + j) + q);
            const float G[4] = {gv.x, gv.y, gv.z, gv.w}, U[4] = {uv.x, uv.y, uv.z, uv.w};
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const float e = (float)exp(-(double)G[i]);
                v[4 * q + i] = G[i] / (1.0f + e) * U[i];
            }
        }
        q8k_quant_warp(v, a.x14, ib, FFN_F);
    }
}

// ffn_stuck counts the waits that gave up after 20 ms (a bug, not a slow GPU): a wrong
// protocol then reports itself instead of hanging the run.
__device__ unsigned ffn_stuck;

// ffn_await spins until *p >= v (acquire), or gives up after 20 ms.
__device__ __forceinline__ void ffn_await(const unsigned* p, unsigned v) {
    const uint64_t t0 = gtime();
    while (ld_acquire(p) < v) {
        if (gtime() - t0 > 20000000) {
            atomicAdd(&ffn_stuck, 1u);
            return;
        }
    }
}

// The block's signals, as CUTLASS's GenericBarrier makes them: its threads meet
// (__syncthreads), then one thread orders the block's earlier writes before its counter
// update with fence.acq_rel.gpu (lighter than __threadfence's membar.gl) and the reader
// waits with ld.acquire.gpu, or takes fence.acq_rel.gpu after an atomic that told it so.
__device__ __forceinline__ void ffn_fence() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
__device__ __forceinline__ unsigned ffn_arrive(unsigned* p) {
    unsigned old;
    ffn_fence();
    asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(p) : "memory");
    return old;
}

__device__ __forceinline__ void ffn_release(unsigned* p, unsigned v) {
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// FFN_DR: down rows a warp at most (a block owns E / G of them, warp w rows lo + w,
// lo + w + 4, ...: at 3 blocks an SM of 132, 10 or 11 rows a block).
#define FFN_DR 3

// ffn_down_step adds step c of the block's down rows [lo, hi) to the lanes' sums acc
// (mv1_q4_k's or mv1_q6_k's lanes and formulas, so a row's sum has mv1's bits whatever
// rows a warp takes), once chunk c's SwiGLU row is flagged; at the last step each row's
// sum goes over the warp into a.d.
// FFN_SROW: a down row's step in the staged copy (DPRE): Q4_K's 8 blocks as they are
// (1,152 bytes), or Q6_K's four planes of them one after another (ql 1,024, qh 512,
// scales 128, d 16 bytes: 1,680).
__device__ __forceinline__ int ffn_srow(int T) { return T == T_Q4_K ? 8 * 144 : 8 * 210; }

// ffn_dpre starts the copies (cp.async.cg, 16 bytes each) of step c of the block's down
// rows [lo, hi) into ds, one committed group; ffn_down_step waits for them.
template <int T>
__device__ __forceinline__ void ffn_dpre(const FfnArgs& a, int lo, int hi, int c, uint8_t* ds) {
    const int nb = FFN_F / 256, per = ffn_srow(T) / 16, base = (int)__cvta_generic_to_shared(ds);
    for (int q = threadIdx.x; q < (hi - lo) * per; q += blockDim.x) {
        const int j = q / per, k = 16 * (q % per);  // row lo + j, byte k of its staged step
        const uint8_t* w = a.down + (i64)(lo + j) * a.dws;
        const uint8_t* src = T == T_Q4_K ? w + 144 * 8 * c + k
                           : k < 1024 ? w + 128 * 8 * c + k
                           : k < 1536 ? w + 128 * nb + 64 * 8 * c + (k - 1024)
                           : k < 1664 ? w + 192 * nb + 16 * 8 * c + (k - 1536)
                                      : w + 208 * nb + 2 * 8 * c + (k - 1664);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(base + j * ffn_srow(T) + k), "l"(src) : "memory");
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}

template <int T>
__device__ __forceinline__ void ffn_down_step(const FfnArgs& a, int lo, int hi, int c, float (&acc)[FFN_DR], const uint8_t* ds) {
    const int lane = threadIdx.x & 31, wp = threadIdx.x >> 5, nb = FFN_F / 256, ib = (lane >> 2) + 8 * c, lb = lane >> 2;
    const int t = lane & 3, hh = t >> 1, g = t & 1;
    // this step's weights first: they depend on nothing (with ds, copied during the GU
    // tasks before: wait for the copies, then read them from shared memory)
    if (ds) {
        asm volatile("cp.async.wait_all;" ::: "memory");
        __syncthreads();
    }
    uint4 h[FFN_DR], qa[FFN_DR], qb[FFN_DR], qh[FFN_DR];
    uint2 sc[FFN_DR];
    uint16_t dw[FFN_DR];
#pragma unroll
    for (int j = 0; j < FFN_DR; j++) {
        const int r = min(lo + wp + 4 * j, hi - 1);
        const uint8_t* w = a.down + (i64)r * a.dws;
        const uint8_t* sw = ds ? ds + (r - lo) * ffn_srow(T) : nullptr;
        if (T == T_Q4_K) {
            const uint8_t* p = ds ? sw + 144 * lb : w + 144 * ib;
            h[j] = *(const uint4*)p, qa[j] = *(const uint4*)(p + 16 + 32 * t), qb[j] = *(const uint4*)(p + 32 + 32 * t);
        } else {
            const uint8_t* ql = ds ? sw + 128 * lb + 64 * hh + 16 * g : w + 128 * ib + 64 * hh + 16 * g;
            qa[j] = *(const uint4*)ql, qb[j] = *(const uint4*)(ql + 32);
            qh[j] = *(const uint4*)(ds ? sw + 1024 + 64 * lb + 32 * hh + 16 * g : w + 128 * nb + 64 * ib + 32 * hh + 16 * g);
            sc[j] = *(const uint2*)(ds ? sw + 1536 + 16 * lb + 8 * hh : w + 192 * nb + 16 * ib + 8 * hh);
            dw[j] = *(const uint16_t*)(ds ? sw + 1664 + 2 * lb : w + 208 * nb + 2 * ib);
        }
    }
    if (threadIdx.x == 0) ffn_await(a.ctl + 1 + FFN_NC + c, 1u);
    __syncthreads();
    const uint8_t* X = a.x14;
    if (T == T_Q4_K) {
        const int4* xb = (const int4*)(X + 256 * ib + 64 * t);
        int xv[16];
#pragma unroll
        for (int q = 0; q < 4; q++) {
            const int4 v = __ldcg(xb + q);
            xv[4 * q] = v.x, xv[4 * q + 1] = v.y, xv[4 * q + 2] = v.z, xv[4 * q + 3] = v.w;
        }
        const float yd = __ldcg((const float*)(X + FFN_F) + ib);
        const int4 bs = __ldcg((const int4*)(X + Q8K_BSUMS(FFN_F) + 64 * ib + 16 * t));
#pragma unroll
        for (int j = 0; j < FFN_DR; j++) {
            int sb;
            const int sa = q4k_dot(qa[j], qb[j], xv, &sb);
            acc[j] += q4k_part(h[j], t, sa, sb, yd, bs);
        }
    } else {
        const uint8_t* xb = X + 256 * ib + 128 * hh + 16 * g;
        int4 xv[4];
#pragma unroll
        for (int q = 0; q < 4; q++) xv[q] = __ldcg((const int4*)(xb + 32 * q));
        const float yd = __ldcg((const float*)(X + FFN_F) + ib);
#pragma unroll
        for (int j = 0; j < FFN_DR; j++) acc[j] += q6k_part(qa[j], qb[j], qh[j], sc[j], dw[j], xv, g, yd);
    }
    if (c + 1 == FFN_NC) {
#pragma unroll
        for (int j = 0; j < FFN_DR; j++) {
            const float sum = warp_sum(acc[j]);
            const int r = lo + wp + 4 * j;
            if (lane == 0 && r < hi) a.d[r] = sum;
        }
    }
    if (ds) __syncthreads();  // ds read by every warp before the next step's copies
}

// ffn_norm: add_rms_norm_q8_k_1's residual add, RMSNorm and Q8_K rounding of one row of
// E by this block's 128 threads, with its bits: thread p plays that kernel's threads p and
// p + 128 (their elements t, t + 256, ... summed in order, their warps' double sums kept
// apart: part[w] and part[w + 4]), warp w then rounds blocks w, w + 4, ... (that kernel's
// warps round the same blocks with the same operations).
__device__ __forceinline__ void ffn_norm(const FfnArgs& a, float* ns) {
    __shared__ double part[8];
    const int p = threadIdx.x, lane = p & 31, wp = p >> 5;
#pragma unroll
    for (int hf = 0; hf < 2; hf++) {
        const int t = p + 128 * hf;
        float av[FFN_E / 256], bv[FFN_E / 256];
#pragma unroll
        for (int k = 0; k < FFN_E / 256; k++) av[k] = __ldcg(a.d + t + 256 * k), bv[k] = __ldcg(a.r + t + 256 * k);
        double ss = 0;
#pragma unroll
        for (int k = 0; k < FFN_E / 256; k++) {
            const float v = av[k] + bv[k];
            ns[t + 256 * k] = v;
            a.r[t + 256 * k] = v;
            ss += (double)v * (double)v;
        }
        ss = warp_sumd(ss);
        if (lane == 0) part[wp + 4 * hf] = ss;
    }
    __syncthreads();
    double tot = 0;
    for (int k = 0; k < 8; k++) tot += part[k];
    const float mean = (float)(tot / (double)FFN_E);
    const float scale = (float)(1.0 / sqrt((double)(mean + a.eps)));
    for (int ib = wp; ib < FFN_E / 256; ib += 4) {
        float v[8];
#pragma unroll
        for (int i = 0; i < 8; i++) v[i] = ns[ib * 256 + 8 * lane + i] * scale * a.nw[ib * 256 + 8 * lane + i];
        *(float4*)(a.dst + ib * 256 + 8 * lane) = make_float4(v[0], v[1], v[2], v[3]);
        *(float4*)(a.dst + ib * 256 + 8 * lane + 4) = make_float4(v[4], v[5], v[6], v[7]);
        q8k_quant_warp(v, a.xn, ib, FFN_E);
    }
}

// ffn: one layer's FFN half (gate/up, SwiGLU, down), G blocks of 128 threads, all
// resident. The GU tasks in the chunks' order (task k of chunk c: gate rows 16k of the
// chunk for k < 128, up rows for the rest) go round the blocks, block b taking b, b + G,
// ... so every block streams all along; block b runs, for c = 0 .. NC - 1, its GU tasks
// of chunk c, then (c >= LAG) step c - LAG of its down rows; then the steps left.
// Only a down step waits (for its chunk's flag), and a block reaches down step c only
// after its GU tasks of chunk c + LAG: the block waiting for the lowest chunk's flag waits
// for GU tasks every block has passed, so the flag comes (the last block to finish one
// of them runs the chunk's SwiGLU before anything else).
__global__ void __launch_bounds__(128, 3) ffn(FfnArgs a, int lag) {
    extern __shared__ __align__(16) uint8_t ffn_xs[];
    uint8_t* xs = ffn_xs;
    __shared__ int last;
    const int G = gridDim.x, b = blockIdx.x, xn = mv1_bytes(T_Q4_K, FFN_E);
    const int lo = (int)((i64)FFN_E * b / G), hi = (int)((i64)FFN_E * (b + 1) / G);
    float acc[FFN_DR] = {};
    bool waited = false, staged = false;  // block-uniform
    // DPRE: the staged down steps after the input row's copy (128-byte aligned)
    uint8_t* ds = a.dpre ? xs + ((xn + 127) & ~127) : nullptr;
    auto dpre = [&](int c) {
        if (!ds) return;
        if (a.dtype == T_Q4_K) ffn_dpre<T_Q4_K>(a, lo, hi, c, ds);
        else ffn_dpre<T_Q6_K>(a, lo, hi, c, ds);
    };
    auto down = [&](int c) {
        if (!waited) pdl_wait(), waited = true;
        if (a.dtype == T_Q4_K) ffn_down_step<T_Q4_K>(a, lo, hi, c, acc, ds);
        else ffn_down_step<T_Q6_K>(a, lo, hi, c, acc, ds);
    };
    int next = b;  // the block's next GU task, in the chunks' order (FFN_GU a chunk)
    for (int c = 0; c < FFN_NC; c++) {
        if (c >= lag) dpre(c - lag);  // down's next step copied while the GU tasks run
        for (; next < FFN_GU * (c + 1); next += G) {
            const int k = next - FFN_GU * c;
            const bool isup = k >= FFN_GU / 2;
            const int tt = (isup ? k - FFN_GU / 2 : k) + c * (FFN_CH / 16);
            ffn_gu(isup ? a.up : a.gate, a.gws, a.x, xs, xn, isup ? a.u : a.g, tt, !staged, !waited);
            waited = staged = true;
            __syncthreads();
            if (threadIdx.x == 0) {
                last = ffn_arrive(a.ctl + 1 + c) + 1 == (unsigned)FFN_GU;
                if (last) ffn_fence();  // every GU task's rows of the chunk, before ours reads them
            }
            __syncthreads();
            if (last) {  // the chunk's SwiGLU, then its flag (a release store)
                ffn_swiglu(a, c);
                __syncthreads();
                if (threadIdx.x == 0) ffn_release(a.ctl + 1 + FFN_NC + c, 1u);
            }
        }
        if (c >= lag) down(c - lag);
    }
    for (int c = FFN_NC - lag; c < FFN_NC; c++) dpre(c), down(c);
    __syncthreads();
    if (threadIdx.x == 0) {  // (this block's rows of d before the count: ffn_norm reads them)
        last = ffn_arrive(a.ctl) + 1 == (unsigned)G;
        if (last) ffn_fence();
    }
    __syncthreads();
    if (last) {  // every other block is done: the norm (NORM=1), and the counters zeroed for the next launch
        if (a.norm) {
            __shared__ float ns[FFN_E];
            ffn_norm(a, ns);
        }
        for (int j = threadIdx.x; j < 1 + 2 * FFN_NC; j += blockDim.x) a.ctl[j] = 0;
    }
}

int main() {
    cudaDeviceProp pr;
    CK(cudaGetDeviceProperties(&pr, 0));
    const int L = getenv("L") ? atoi(getenv("L")) : 32, gap = getenv("GAP") ? atoi(getenv("GAP")) : 0;
    const int lag = getenv("LAG") ? atoi(getenv("LAG")) : 1;  // down's step c after GU chunk c + LAG (1 .. 6)
    const int dpre = getenv("DPRE") ? atoi(getenv("DPRE")) : 0;  // down's steps staged in shared memory (ffn_dpre)
    const int gws = rowbytes(T_Q4_K, FFN_E);
    std::vector<FfnLayer> ly(L);
    const size_t bytes = ffn_layers(ly, FFN_E, FFN_F);
    uint8_t *x = ffn_input(FFN_E), *x14c, *x14f;
    CK(cudaMalloc(&x14c, xbytes(FFN_F)));
    CK(cudaMalloc(&x14f, xbytes(FFN_F)));
    float *g, *u;
    unsigned *ctl, *out;
    CK(cudaMalloc(&g, FFN_F * 4));
    CK(cudaMalloc(&u, FFN_F * 4));
    CK(cudaMalloc(&ctl, (1 + 2 * FFN_NC) * 4));
    CK(cudaMemset(ctl, 0, (1 + 2 * FFN_NC) * 4));
    CK(cudaMalloc(&out, 1 << 20));
    // NORM=1: the residual row, the norm's weights and outputs (the chain's, the fused kernel's)
    const int norm = getenv("NORM") ? atoi(getenv("NORM")) : 0;
    std::vector<float> hr(FFN_E), hw(FFN_E);
    for (int j = 0; j < FFN_E; j++) hr[j] = (float)((j * 37) % 101 - 50) / 25.0f, hw[j] = 1.0f + (float)(j % 7) / 16.0f;
    float *rc, *rf, *dstc, *dstf, *nw;
    uint8_t *xnc, *xnf;
    for (float** q : {&rc, &rf, &dstc, &dstf, &nw}) CK(cudaMalloc(q, FFN_E * 4));
    CK(cudaMalloc(&xnc, xbytes(FFN_E)));
    CK(cudaMalloc(&xnf, xbytes(FFN_E)));
    CK(cudaMemcpy(rc, hr.data(), FFN_E * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(rf, hr.data(), FFN_E * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(nw, hw.data(), FFN_E * 4, cudaMemcpyHostToDevice));
    const float eps = 1e-5f;
    CK(cudaDeviceSynchronize());

    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    const int xn4 = xbytes(FFN_E), xn14 = xbytes(FFN_F);
    auto chain = [&]() {
        for (int l = 0; l < L; l++) {
            const FfnLayer& y = ly[l];
            const int nrb = 2 * (FFN_F / 16);
            launch_smem(s, mmv_multi, nrb, 128, xn4, (const uint8_t*)x, (i64)0, FFN_E, (const uint8_t*)y.gate, (i64)gws, g, FFN_F,
                        T_Q4_K, (const uint8_t*)y.up, (i64)gws, u, FFN_F, T_Q4_K, (const uint8_t*)nullptr, (i64)0, (float*)nullptr, 0,
                        T_Q4_K);
            launch(s, swiglu_q8_k, dim3((FFN_F / 256 + Q8KW_WARPS - 1) / Q8KW_WARPS, 1), 32 * Q8KW_WARPS, g, (const float*)g,
                   (const float*)u, FFN_F, x14c, (i64)0, (uint16_t*)nullptr, (i64)0);
            const int drows = y.dtype == T_Q4_K ? 4 * Q4K_R1 : 4 * Q6K_R1;
            launch_smem(s, y.dtype == T_Q4_K ? mmv_q4_k_1 : mmv_q6_k_1, FFN_E / drows, 128, xn14, (const uint8_t*)y.down,
                        (i64)rowbytes(y.dtype, FFN_F), (const uint8_t*)x14c, (i64)0, y.dc, (i64)0, FFN_E, FFN_F, 1);
            if (norm)
                launch(s, add_rms_norm_q8_k_1, 1, 256, rc, (const float*)y.dc, (const float*)rc, dstc, (const float*)nw, FFN_E, eps,
                       xnc);
            if (gap) launch(s, kgap, 1, 32, out, gap);
        }
    };
    // ffn's dynamic shared memory: the input row, then (DPRE) a step of 4 * FFN_DR down rows
    const int fsm = dpre ? ((xn4 + 127) & ~127) + 4 * FFN_DR * 8 * 210 : xn4;
    CK(cudaFuncSetAttribute(ffn, cudaFuncAttributeMaxDynamicSharedMemorySize, fsm));
    int occ;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, ffn, 128, fsm));
    const int grid = occ * pr.multiProcessorCount;
    if ((FFN_E + grid - 1) / grid > 4 * FFN_DR || lag < 0 || lag >= FFN_NC) {
        printf("ffn: %d blocks leave a block more than %d down rows, or LAG %d is not 0 .. %d\n", grid, 4 * FFN_DR, lag, FFN_NC - 1);
        return 1;
    }
    auto fused = [&]() {
        for (int l = 0; l < L; l++) {
            const FfnLayer& y = ly[l];
            FfnArgs a{y.gate, y.up, y.down, (i64)gws, (i64)rowbytes(y.dtype, FFN_F), y.dtype, x, g, u, x14f, y.df, ctl, norm, dpre, rf,
                      dstf, nw, xnf, eps};
            launch_smem(s, ffn, grid, 128, fsm, a, lag);
            if (gap) launch(s, kgap, 1, 32, out, gap);
        }
    };
    printf("%.2f GB of FFN weights in %d layers; ffn: %d blocks (%d an SM), lag %d, gap %d ns, norm %d, dpre %d\n", bytes / 1e9, L, grid,
           occ, lag, gap, norm, dpre);
    // bits: layer 0's and the last layer's down outputs, and the last SwiGLU row
    chain();
    fused();
    CK(cudaStreamSynchronize(s));
    size_t diff = 0, n = 0;
    for (int l : {0, L - 1}) {
        std::vector<float> a(FFN_E), b(FFN_E);
        CK(cudaMemcpy(a.data(), ly[l].dc, FFN_E * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(b.data(), ly[l].df, FFN_E * 4, cudaMemcpyDeviceToHost));
        for (int j = 0; j < FFN_E; j++) diff += memcmp(&a[j], &b[j], 4) != 0, n++;
    }
    auto bytes_differ = [&](const void* p, const void* q, size_t nb) {
        std::vector<uint8_t> a(nb), b(nb);
        CK(cudaMemcpy(a.data(), p, nb, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(b.data(), q, nb, cudaMemcpyDeviceToHost));
        for (size_t j = 0; j < nb; j++) diff += a[j] != b[j], n++;
    };
    bytes_differ(x14c, x14f, xn14);
    if (norm) bytes_differ(rc, rf, FFN_E * 4), bytes_differ(dstc, dstf, FFN_E * 4), bytes_differ(xnc, xnf, xbytes(FFN_E));
    unsigned stuck;
    CK(cudaMemcpyFromSymbol(&stuck, ffn_stuck, 4));
    printf("fused against the chain: %zu of %zu outputs and SwiGLU bytes differ%s; %u waits gave up\n", diff, n,
           diff ? "  WRONG" : "", stuck);
    for (int r = 0; r < 2; r++) {  // then the waits that gave up during the timing, if any
        const float tc = graph_best_ms(s, chain, 2, 5), tf = graph_best_ms(s, fused, 2, 5);
        printf("round %d: chain %.3f ms (%.2f TB/s, %.2f us a layer), fused %.3f ms (%.2f TB/s, %.2f us a layer)\n", r, tc,
               bytes / (tc * 1e-3) / 1e12, 1e3 * tc / L, tf, bytes / (tf * 1e-3) / 1e12, 1e3 * tf / L);
    }
    CK(cudaMemcpyFromSymbol(&stuck, ffn_stuck, 4));
    if (stuck) printf("%u waits gave up in all\n", stuck);
    return 0;
}
