// mvx.cuh (session 91, NORM=11; built with -DMVX over a copy of kernels/cuda in /tmp/kc
// whose pdl_wait calls mvx_wait when a block's dynamic shared memory size has bit 3 set:
// build/wip/s91-call3.sh makes it). mvg.cuh's second call showed where its loss was: a
// product block's atomic with a return value (who is last?) costs ~3.9 us a product,
// while a fire-and-forget red.release costs ~0.7 us. So here nobody in the producer learns
// it is last: every producer block (O, gate/up, down) only adds to its group's counter
// (red.release), and the consumer kernel after it (gate/up, down, the next Q/K/V or the
// head; launched by the programmatic edge as now, so once every producer block has
// started) waits on counters instead of griddepcontrol.wait: its block b < groups first
// waits for group b's count (one warp), does the group's tail (the norm's add, partial
// sum of squares and rounding of x * w, or swiglu_q8_k's 256 values) and adds to a done
// count; every block then waits for the done count and goes on as mv1 does. No norm or
// SwiGLU kernel, no boundary between producer and consumer. Counters are zeroed by one
// memset at the graph's start. Timing only (the consumers stage the chain's x4 / x14, not
// the tails' rows, and nothing applies the norm's scale).
#pragma once

struct Tail {  // a consumer's tails, copied into the end of its dynamic shared memory
    unsigned* cnt;   // the producer's counts, one a group (nullptr: griddepcontrol.wait)
    unsigned* done;  // the groups whose tail is done
    int ngroups, per, kind, cols;  // kind 0: SwiGLU of a (gate) and b (up); 1: the norm of a + r
    const float *a, *b;
    float *r, *dst;
    const float* w;
    uint8_t* x;
    double* parts;
    unsigned* err;  // set when a wait gives up
};
#define MVX_EXTRA 136  // sizeof(Tail) rounded to 128, + 8: the marker bit in the size

__device__ __forceinline__ bool mvx_spin(const unsigned* p, unsigned target, unsigned* err) {
    for (int i = 0; i < (1 << 16); i++)
        if (ld_acquire(p) >= target) return true;
    atomicExch(err, 1u);
    return false;
}

__device__ void mvx_wait(unsigned n) {
    extern __shared__ __align__(16) uint8_t mvx_dyn[];
    const Tail& t = *(const Tail*)(mvx_dyn + n - MVX_EXTRA);
    const int b = blockIdx.x, lane = threadIdx.x & 31;
    if (b < t.ngroups && threadIdx.x < 32) {
        mvx_spin(t.cnt + b, (unsigned)t.per, t.err);  // every lane acquires
        const int j = b * 256 + 8 * lane;
        float v[8];
        if (t.kind == 0) {
            float gv[8], uv[8];
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const float4 a = __ldcg((const float4*)(t.a + j + 4 * h)), c = __ldcg((const float4*)(t.b + j + 4 * h));
                gv[4 * h] = a.x, gv[4 * h + 1] = a.y, gv[4 * h + 2] = a.z, gv[4 * h + 3] = a.w;
                uv[4 * h] = c.x, uv[4 * h + 1] = c.y, uv[4 * h + 2] = c.z, uv[4 * h + 3] = c.w;
            }
#pragma unroll
            for (int i = 0; i < 8; i++) {
                const float e = (float)exp(-(double)gv[i]);
                v[i] = gv[i] / (1.0f + e) * uv[i];
            }
            *(float4*)(t.dst + j) = make_float4(v[0], v[1], v[2], v[3]);
            *(float4*)(t.dst + j + 4) = make_float4(v[4], v[5], v[6], v[7]);
        } else {
            float4 a[2], r[2], w[2];
#pragma unroll
            for (int h = 0; h < 2; h++)
                a[h] = __ldcg((const float4*)(t.a + j + 4 * h)), r[h] = __ldcg((const float4*)(t.r + j + 4 * h)),
                w[h] = __ldg((const float4*)(t.w + j + 4 * h));
            double ss = 0;
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const float4 s = make_float4(a[h].x + r[h].x, a[h].y + r[h].y, a[h].z + r[h].z, a[h].w + r[h].w);
                *(float4*)(t.r + j + 4 * h) = s;
                ss += (double)s.x * s.x + (double)s.y * s.y + (double)s.z * s.z + (double)s.w * s.w;
                v[4 * h] = s.x * w[h].x, v[4 * h + 1] = s.y * w[h].y, v[4 * h + 2] = s.z * w[h].z, v[4 * h + 3] = s.w * w[h].w;
            }
            ss = warp_sumd(ss);
            if (lane == 0) t.parts[b] = ss;
        }
        q8k_quant_warp(v, t.x, b, t.cols);
        __syncwarp();
        if (lane == 0) asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(t.done) : "memory");
    }
    if (threadIdx.x == 0) mvx_spin(t.done, (unsigned)t.ngroups, t.err);
    __syncthreads();
}

// mvx: mmv_multi's products (MODE 0) or gate/up interleaved as mv1_gu's (MODE 1: 16 gate
// and 16 up blocks a group), waiting on tail's counters when tail.cnt is set (launched
// with MVX_EXTRA more bytes of shared memory then), and adding to ocnt[its group] at the
// end when ocnt is set (oper blocks a group).
template <int MODE>
__global__ void __launch_bounds__(128) mvx(MMV_MULTI_ARGS, Tail tail, unsigned* ocnt, int oper) {
    extern __shared__ __align__(16) uint8_t mvx_dyn[];
    pdl_defer();
    if (tail.cnt) {
        if (threadIdx.x == 0) *(Tail*)(mvx_dyn + dyn_smem_size() - MVX_EXTRA) = tail;
        __syncthreads();
    }
    int g;
    if (MODE == 1) {
        g = (int)blockIdx.x / 32;
        const int k = (int)blockIdx.x % 32;
        if (k < 16)
            mv1<T_Q4_K, true>(W0, ws0, X, D0, M0, K, 16 * g + k);
        else
            mv1<T_Q4_K, true>(W1, ws1, X, D1, M1, K, 16 * g + k - 16);
    } else {
        g = oper ? (int)blockIdx.x / oper : 0;
        mmv_multi_body<0, false>(X, xstride, K, W0, ws0, D0, M0, t0, W1, ws1, D1, M1, t1, W2, ws2, D2, M2, t2);
    }
    if (ocnt) {
        __syncthreads();
        if (threadIdx.x == 0) asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(ocnt + g) : "memory");
    }
}
