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
        if (t.kind == 0)
            tail_swiglu(b, t.a, t.b, t.dst, t.x, t.cols);
        else
            tail_norm(b, t.a, t.r, t.w, t.x, t.parts, t.cols);
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
