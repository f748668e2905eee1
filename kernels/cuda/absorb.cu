// absorb.cu: DeepSeek's absorbed query of one decode row in one launch
// (inference/backend/cuda/absorb.go; build/micro/qkb.cu measured the form, NOTES.md
// session 69). The chain it replaces: the mat-vec of every head's q_nope rows (Q4_K, H x
// 128 rows of E), quant_q8 (each head's 128 values to Q8_0), then attn_k_b's per-head
// products (mmv_idw_q8_0: each head's 512 x 128 Q8_0 matrix times its row). attn_k_b's
// head h reads q_nope's head h only, yet waits for every head, twice.
//
// Here a cluster of ABS_CS = 8 blocks takes a head. Block r computes q_nope rows
// 16 r .. 16 r + 15 of its head (warp w two of them: mv1_q4_k's lanes and sums, written
// to qn as the mat-vec writes them), the cluster's 128 values are read from the peers'
// shared memory and rounded to Q8_0 by four warps (q8_quant_lane: quant_q8's bytes), and
// block r computes attn_k_b rows 64 r .. 64 r + 63 (a row's four Q8_0 blocks on eight
// lanes; the lane terms added in mv1_q8_0's butterfly order: mmv_idw_q8_0's bits). Every
// weight of the block is loaded before the PDL wait. So the outputs are the chain's bits.
//
// Grid H * ABS_CS blocks of 256 threads. E a multiple of 256, at most 2,048 (one mv1
// step a row); attn_k_b rows of kbs bytes (mv1's planar Q8_0 rows of 128), kbest bytes
// between heads; D's head rows dstride floats apart.
#include "mv1.cuh"

#define ABS_CS 8    // blocks a head
#define ABS_QN 128  // q_nope values a head
#define ABS_QL 512  // attn_k_b rows a head (the latent width)

extern "C" __global__ void __cluster_dims__(ABS_CS, 1, 1) __launch_bounds__(256)
    absorb_q4_k_q8_0(const uint8_t* Wq, i64 wqs, const uint8_t* Xq, int E, float* qn, const uint8_t* Wkb, i64 kbs, i64 kbest, float* D,
                     i64 dstride) {
    pdl_defer();
    constexpr int RQ = ABS_QN / ABS_CS;  // q_nope rows a block (16: two a warp)
    constexpr int RK = ABS_QL / ABS_CS;  // attn_k_b rows a block (64: two steps of four rows a warp)
    __shared__ float qs[RQ], xs[ABS_QN];
    __shared__ __align__(16) uint8_t qrow[ABS_QN + 16];  // the head's Q8_0 row: quants, then four d
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    const int hd = blockIdx.x / ABS_CS, warp = threadIdx.x >> 5, lane = threadIdx.x & 31, c = lane & 3, ib = lane >> 2, nb = E / 256;
    const int q0 = ABS_QN * hd + RQ * (int)r + 2 * warp;  // the warp's first q_nope row
    uint4 h[2], qa[2], qb[2];
    if (ib < nb) {
#pragma unroll
        for (int i = 0; i < 2; i++) {
            const uint8_t* p = Wq + (i64)(q0 + i) * wqs + 144 * ib;
            h[i] = ldw16<wev(false, true)>(p), qa[i] = ldw16<wev(false, true)>(p + 16 + 32 * c);
            qb[i] = ldw16<wev(false, true)>(p + 32 + 32 * c);
        }
    }
    const int rl = lane >> 3, blk = (lane >> 1) & 3, half = lane & 1;
    int4 kq[2];
    uint16_t kd[2];
#pragma unroll
    for (int s = 0; s < 2; s++) {
        const uint8_t* p = Wkb + (i64)hd * kbest + (i64)(RK * (int)r + 32 * s + 4 * warp + rl) * kbs;
        kq[s] = ldw16i<wev(true)>(p + 32 * blk + 16 * half);
        kd[s] = ldw2<wev(true)>(p + ABS_QN + 2 * blk);
    }
    pdl_wait();
    int xv[16];
    float yd = 0;
    int4 bs = make_int4(0, 0, 0, 0);
    if (ib < nb) q4k_x(Xq, E, ib, c, false, xv, &yd, &bs);
#pragma unroll
    for (int i = 0; i < 2; i++) {
        float acc = 0;
        if (ib < nb) {
            int sb;
            const int sa = q4k_dot(qa[i], qb[i], xv, &sb);
            acc += q4k_part(h[i], c, sa, sb, yd, bs);
        }
        const float v = warp_sum(acc);
        if (lane == 0) qs[2 * warp + i] = v, qn[q0 + i] = v;
    }
    cluster_sync();
    if (threadIdx.x < ABS_QN) xs[threadIdx.x] = cluster_ld(qs + threadIdx.x % RQ, threadIdx.x / RQ);  // the head's 128
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");  // the peers may leave once all have read
    __syncthreads();
    if (warp < ABS_QN / 32) q8_quant_lane(xs[32 * warp + lane], qrow, warp, ABS_QN, 0);  // quant_q8's bytes
    __syncthreads();
    const int4 xq = *(const int4*)(qrow + 32 * blk + 16 * half);
    const float dx = ((const float*)(qrow + ABS_QN))[blk];
    float* out = D + (i64)hd * dstride + RK * (int)r + 4 * warp + rl;
#pragma unroll
    for (int s = 0; s < 2; s++) {
        int sm = __dp4a(kq[s].x, xq.x, __dp4a(kq[s].y, xq.y, __dp4a(kq[s].z, xq.z, __dp4a(kq[s].w, xq.w, 0))));
        sm += __shfl_xor_sync(0xffffffffu, sm, 1);
        float v = 0;
        if (half == 0) v += (float)sm * (h2f(kd[s]) * dx);
        // mv1_q8_0's warp_sum over a warp whose lanes 0, 2, 4, 6 hold a row's four terms:
        // the zeros of lanes 8-31 (xor 16, 8), then xor 4, 2, 1
        v = v + 0.0f;
        v = v + 0.0f;
        v += __shfl_xor_sync(0xffffffffu, v, 4);
        v += __shfl_xor_sync(0xffffffffu, v, 2);
        v += __shfl_xor_sync(0xffffffffu, v, 1);
        if ((lane & 7) == 0) out[32 * s] = v;
    }
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}
