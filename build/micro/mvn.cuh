// mvn.cuh: where a batch-1 decode step's norm (the residual add, RMSNorm and Q8_K
// rounding of add_rms_norm_q8_k) can sit in mvp.cu's chain, each with its bits:
//   NORM=0  add_rms_norm_q8_k as the engine launches it (one block of 1,024 threads);
//   NORM=1  mvn256: one block of 256 threads (two barriers where the engine's takes
//           four, and registers that fit beside the product's blocks);
//   NORM=2  mvn256 that lets the next kernel launch before its own wait;
//   NORM=3  no norm at all (the bound; its outputs differ);
//   NORM=4  mv1_ln: the product before the norm runs it in its last block (an atomic
//           counter), one kernel boundary fewer;
//   NORM=5  the engine's add_rms_norm_q8_k_1 (quant.cu: mvn256 with one barrier);
//   NORM=6  mv1_ln with REG: NORM=4 with no row in shared memory (mvn_norm_reg);
//   NORM=7  mvc.cuh: the norm inside the next product, by its thread block clusters;
//   NORM=8  no norm, every product launched in clusters (what a cluster launch costs).
// Session 33's skip study: the two norms of a layer cost ~3.9 us each in the engine's
// chain (8B Q4_K_M tg128 530 without against 468 with).
#pragma once

// mvn_norm<NT>: add_rms_norm_q8_k's row by NT threads (128, 256 or 512; named barrier 1,
// so that a block's other warps may be elsewhere), with its bits: warp w holds elements 8
// lane + i of the 256-element blocks w, w + NT/32, ... (q8k_quant_warp's layout), all its
// loads of a and r issued at once (one round trip; mvp.cu's first norm read them a
// strided element at a time behind its stores, ~32 dependent round trips); the sum of
// squares is add_rms_norm_row's (thread t's strided double sum over j = t, t + 256, ...,
// warp sums, the 8 in order; at NT 128 a thread takes t and t + 128). wv: the thread's
// norm weights (mvn_weights, loaded before any wait). cols <= 4096.
template <int NT>
__device__ __forceinline__ void mvn_weights(const float* w, int cols, float wv[512 / NT][8]) {
    const int lane = threadIdx.x & 31, wp = threadIdx.x >> 5;
#pragma unroll
    for (int u = 0; u < 512 / NT; u++)
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const int ib = wp + NT / 32 * u;
            wv[u][i] = ib < cols / 256 ? w[ib * 256 + 8 * lane + i] : 0.0f;
        }
}
template <int NT>
__device__ __forceinline__ void mvn_norm(const float* a, const NormArgs& n, const float wv[512 / NT][8]) {
    constexpr int U = 512 / NT;
    __shared__ __align__(16) float xs[4096];
    __shared__ double part[8];
    const int t = threadIdx.x, lane = t & 31, wp = t >> 5, nb = n.cols / 256;
    float4 av[U][2], rv[U][2];
    // element j of the warp's step u, half h; all loads of a and r first, then the sums
    auto at = [&](int u, int h) { return (wp + NT / 32 * u) * 256 + 8 * lane + 4 * h; };
#pragma unroll
    for (int u = 0; u < U * 2; u++)
        if (wp + NT / 32 * (u >> 1) < nb)
            av[u >> 1][u & 1] = __ldcg((const float4*)(a + at(u >> 1, u & 1))), rv[u >> 1][u & 1] = __ldcg((const float4*)(n.r + at(u >> 1, u & 1)));
#pragma unroll
    for (int u = 0; u < U * 2; u++)
        if (wp + NT / 32 * (u >> 1) < nb) {
            const float4 x = av[u >> 1][u & 1], y = rv[u >> 1][u & 1];
            const float4 s = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
            *(float4*)(xs + at(u >> 1, u & 1)) = s;
            *(float4*)(n.r + at(u >> 1, u & 1)) = s;
        }
    asm volatile("bar.sync 1, %0;" ::"n"(NT) : "memory");
#pragma unroll
    for (int v = 0; v < (NT < 256 ? 2 : 1); v++) {
        const int vt = t + NT * v;
        if (vt < 256) {
            double s = 0;
            for (int j = vt; j < n.cols; j += 256) s += (double)xs[j] * (double)xs[j];
            s = warp_sumd(s);
            if (lane == 0) part[vt >> 5] = s;
        }
    }
    asm volatile("bar.sync 1, %0;" ::"n"(NT) : "memory");
    double ss = 0;
    for (int k = 0; k < 8; k++) ss += part[k];
    const float mean = (float)(ss / (double)n.cols);
    const float scale = (float)(1.0 / sqrt((double)(mean + n.eps)));
#pragma unroll
    for (int u = 0; u < U; u++) {
        const int ib = wp + NT / 32 * u;
        if (ib >= nb) break;
        float v[8];
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const int j = ib * 256 + 8 * lane + i;
            v[i] = xs[j] * scale * wv[u][i];
            n.dst[j] = v[i];
        }
        q8k_quant_warp(v, n.x, ib, n.cols);
    }
    asm volatile("bar.sync 1, %0;" ::"n"(NT) : "memory");  // xs and part free again
}

// mvn256: mvn_norm<256> as a kernel (EARLY: the next kernel launched before the wait).
template <bool EARLY>
__global__ void __launch_bounds__(256) mvn256(NormArgs n, const float* a) {
    float wv[2][8];
    mvn_weights<256>(n.w, n.cols, wv);
    if (EARLY) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    asm volatile("griddepcontrol.wait;" ::: "memory");
    if (!EARLY) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    mvn_norm<256>(a, n, wv);
}

// mvn_norm_reg: mvn_norm<128> (its bits) with no row in shared memory, so that a
// product's blocks carry no 16 KiB of it (NORM=4's mv1_ln did, and shared memory taken
// is L1 lost to the mat-vecs' loads in flight). Thread t holds the strided elements of
// virtual threads t and t + 128 (j = t + 128 h + 256 k): its sums of squares are
// add_rms_norm_row's directly; each 256-element block's largest magnitude meets over the
// four warps in shared memory (16 x 4 entries), one barrier for all blocks; each 16
// elements' sum is a half warp's. cols <= 4096.
__device__ __forceinline__ void mvn_norm_reg(const float* a, const NormArgs& n) {
    __shared__ double part[8];
    __shared__ float ma[16][4], mx[16][4];
    __shared__ int mi[16][4];
    const int t = threadIdx.x, lane = t & 31, wp = t >> 5, nb = n.cols / 256;
    float s[2][16], wv[2][16];
    // e = 2k + h: element t + 128h + 256k; all loads of a and r first (wv: r, then w)
#pragma unroll
    for (int e = 0; e < 32; e++)
        if ((e >> 1) < nb) s[e & 1][e >> 1] = __ldcg(a + t + 128 * (e & 1) + 256 * (e >> 1)), wv[e & 1][e >> 1] = __ldcg(n.r + t + 128 * (e & 1) + 256 * (e >> 1));
#pragma unroll
    for (int e = 0; e < 32; e++)
        if ((e >> 1) < nb) {
            const int j = t + 128 * (e & 1) + 256 * (e >> 1);
            s[e & 1][e >> 1] += wv[e & 1][e >> 1];
            n.r[j] = s[e & 1][e >> 1];
            wv[e & 1][e >> 1] = n.w[j];
        }
#pragma unroll
    for (int h = 0; h < 2; h++) {
        double ss = 0;
#pragma unroll
        for (int k = 0; k < 16; k++)
            if (k < nb) ss += (double)s[h][k] * (double)s[h][k];
        ss = warp_sumd(ss);
        if (lane == 0) part[wp + 4 * h] = ss;
    }
    __syncthreads();
    double tot = 0;
    for (int k = 0; k < 8; k++) tot += part[k];
    const float mean = (float)(tot / (double)n.cols);
    const float scale = (float)(1.0 / sqrt((double)(mean + n.eps)));
#pragma unroll
    for (int k = 0; k < 16; k++) {
        if (k >= nb) break;
        float am = -2.0f, xm = 0.0f;
        int im = 0;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const float v = s[h][k] * scale * wv[h][k];
            s[h][k] = v;
            n.dst[t + 128 * h + 256 * k] = v;
            float m = fabsf(v);
            if (m != m) m = -1.0f;
            if (q8k_first(m, t + 128 * h, am, im)) am = m, im = t + 128 * h, xm = v;
        }
        for (int o = 16; o > 0; o >>= 1) {
            const float a2 = __shfl_xor_sync(0xffffffffu, am, o), x2 = __shfl_xor_sync(0xffffffffu, xm, o);
            const int i2 = __shfl_xor_sync(0xffffffffu, im, o);
            if (q8k_first(a2, i2, am, im)) am = a2, im = i2, xm = x2;
        }
        if (lane == 0) ma[k][wp] = am, mi[k][wp] = im, mx[k][wp] = xm;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 16; k++) {
        if (k >= nb) break;
        float am = ma[k][0], xm = mx[k][0];
        int im = mi[k][0];
        for (int u = 1; u < 4; u++)
            if (q8k_first(ma[k][u], mi[k][u], am, im)) am = ma[k][u], im = mi[k][u], xm = mx[k][u];
        const float iscale = q8k_iscale(am, xm), d = q8k_d(am, iscale);
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int e = t + 128 * h, q = q8k_q(am, iscale, s[h][k]);
            n.x[256 * k + e] = (uint8_t)(int8_t)q;
            int bs = q;
            for (int o = 8; o > 0; o >>= 1) bs += __shfl_xor_sync(0xffffffffu, bs, o);
            if ((e & 15) == 0) ((int*)(n.x + Q8K_BSUMS(n.cols)))[k * 16 + e / 16] = bs;
        }
        if (t == 0) ((float*)(n.x + n.cols))[k] = d;
    }
}

// mv1_ln: mmv_q4_k_1 / mmv_q6_k_1, then the norm of its output by the last block to
// finish (mvn_norm's bits; cnt zero between launches, the last block zeroes it); REG
// (NORM=6): mvn_norm_reg, no row in shared memory.
template <int T, bool REG>
__global__ void __launch_bounds__(128) mv1_ln(const uint8_t* W, i64 ws, const uint8_t* X, float* D, int M, int K, NormArgs na,
                                             unsigned* cnt) {
    __shared__ int last;
    mv1<T, true>(W, ws, X, D, M, K, blockIdx.x);
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(cnt, 1) == gridDim.x - 1;
    __syncthreads();
    if (last) {
        __threadfence();
        if (REG) {
            mvn_norm_reg(D, na);
        } else {
            float wv[4][8];
            mvn_weights<128>(na.w, na.cols, wv);
            mvn_norm<128>(D, na, wv);
        }
        if (threadIdx.x == 0) *cnt = 0;
    }
}
