// mvr.cuh: mvp.cu's third way, a persistent kernel whose weights never stop streaming.
//
// mvp's persistent kernel (mv1 grid-stride) stages the activation row again for every row
// block and asks L2 for one row block ahead; on the H200 (session 33) it took 3.8 ms where
// the chain takes 1.75. Here one block an SM has a producer warp that copies the block's
// share of every product of the step, in step order, into a ring of S shared-memory
// stages (cp.async.bulk, mvs.cu's barriers), and never waits for anything but a free
// stage: while the consumers wait for a group's release (the norm, the attention's gap),
// the next group's weights land. So the serial ops of a layer overlap the weight stream
// as far as S stages reach (S * SB bytes an SM).
//
// A block's share of a product is a contiguous range of its rows (M * b / G to M * (b + 1)
// / G); the range goes in row sets of up to RS rows (two a consumer warp), and a row set
// in K chunks of KB = 8 Q4_K/Q6_K blocks (2,048 elements), one stage each. The consumers
// (NW warps) take rows 2w and 2w + 1 of a set; lane j / 4 takes block 8 kc + j / 4 of
// chunk kc, so each lane meets its blocks in mv1's order and a row's sum is mv1's, bit
// for bit (mvs.cu's argument). A stage holds a row's chunk at r * KB * bpb: Q4_K's 1,152
// bytes as they are, Q6_K's (repacked rows: ql, qh, scales, d planes) as its four
// planes' chunks one after another (1,024 + 512 + 128 + 16 bytes).
//
// The group protocol is mvp's: bar[0] counts arrivals, bar[1] the groups released; the
// last block to arrive runs the serial op (the norm with add_rms_norm_q8_k's bits, by its
// NW consumer warps, or GAP ns) and releases. Activation rows are read from L2 (cp.async.cg)
// after the acquire, so no stale L1 line of x4 (which the norms rewrite) is read.
#pragma once
#ifdef MVX
#include "/tmp/kc/mvs.cu"
#else
#include "../../kernels/cuda/mvs.cu"
#endif

#define MVR_KB 8
#define MVR_NW 16

__device__ __forceinline__ int mvr_bpb(int T) { return T == T_Q4_K ? 144 : 210; }
// mvr_rs: the rows of a stage of type T (at most two a consumer warp, at most SB bytes).
__device__ __forceinline__ int mvr_rs(int T, int SB) { return min(2 * MVR_NW, SB / (MVR_KB * mvr_bpb(T))); }

// mvr_chunk_q4_k / _q6_k: a lane's term of chunk kc of a stage row at w (mv1's formulas).
__device__ __forceinline__ float mvr_q4_k(const uint8_t* w, const uint8_t* x4, int K, int kc) {
    const int lane = threadIdx.x & 31, c = lane & 3, j = lane >> 2, ib = MVR_KB * kc + j;
    const uint8_t* p = w + 144 * j;
    const uint4 h = *(const uint4*)p, qa = *(const uint4*)(p + 16 + 32 * c), qb = *(const uint4*)(p + 32 + 32 * c);
    int xs[16];
    float yd;
    int4 bs;
    q4k_x(x4, K, ib, c, true, xs, &yd, &bs);
    int sb;
    const int sa = q4k_dot(qa, qb, xs, &sb);
    return q4k_part(h, c, sa, sb, yd, bs);
}
__device__ __forceinline__ float mvr_q6_k(const uint8_t* w, const uint8_t* x6, int K, int kc) {
    const int lane = threadIdx.x & 31, t = lane & 3, h = t >> 1, g = t & 1, j = lane >> 2, ib = MVR_KB * kc + j;
    const uint8_t* ql = w + 128 * j + 64 * h + 16 * g;
    const uint4 qa = *(const uint4*)ql, qb = *(const uint4*)(ql + 32);
    const uint4 qh = *(const uint4*)(w + 128 * MVR_KB + 64 * j + 32 * h + 16 * g);
    const uint2 sc = *(const uint2*)(w + 192 * MVR_KB + 16 * j + 8 * h);
    const uint16_t dw = *(const uint16_t*)(w + 208 * MVR_KB + 2 * j);
    const uint8_t* xb = x6 + 256 * ib + 128 * h + 16 * g;
    const int sw = ((ib & 1) << 1) | h;
    int4 xv[4];
#pragma unroll
    for (int s = 0; s < 4; s++) xv[s] = *(const int4*)(xb + 32 * (s ^ sw));
    const float yd = ((const float*)(x6 + K))[ib];
    return q6k_part(qa, qb, qh, sc, dw, xv, g, yd);
}

// mvr_copy: lane's row r (global row gr of p) chunk kc into stage row dst.
__device__ __forceinline__ void mvr_copy(const Prod& p, int gr, int kc, uint32_t dst, uint32_t bar) {
    const uint8_t* row = p.w + (i64)gr * p.ws;
    const int nb = p.K / 256, k0 = MVR_KB * kc;
    if (p.T == T_Q4_K) {
        bulk_g2s(dst, row + 144 * k0, 144 * MVR_KB, bar);
    } else {
        bulk_g2s(dst, row + 128 * k0, 128 * MVR_KB, bar);
        bulk_g2s(dst + 128 * MVR_KB, row + 128 * nb + 64 * k0, 64 * MVR_KB, bar);
        bulk_g2s(dst + 192 * MVR_KB, row + 192 * nb + 16 * k0, 16 * MVR_KB, bar);
        bulk_g2s(dst + 208 * MVR_KB, row + 208 * nb + 2 * k0, 2 * MVR_KB, bar);
    }
}

// Repacked weights (session 40, REPACK=1): build/micro/ring.cu found bulk copies of ~1
// KiB bound by their count (1.6-2.2 TB/s) where copies of 16-64 KiB stream at ~4, and
// the K-chunked stages above take one copy a row chunk (1,152 or 4 x 1,680 bytes). A
// repacked copy of a product (p.rp) holds each block's row sets chunk by chunk, so a
// stage is one copy: row set r0 (n rows) of a block's share has its chunk kc at rp +
// (r0 * nk + kc * n) * cb, row j of it cb bytes further each (cb = MVR_KB blocks of the
// type, Q6_K's four planes one after another as the stage holds them).

// mvr_rs_host is mvr_rs on the host.
static int mvr_rs_host(int T, int SB) { return std::min(2 * MVR_NW, SB / (MVR_KB * (T == T_Q4_K ? 144 : 210))); }

// mvr_repack writes p's repacked copy at rp for a grid of NB blocks and stages of SB
// bytes; one block (of this kernel) a block share.
__global__ void mvr_repack(Prod p, uint8_t* rp, int SB, int NB) {
    const int B = blockIdx.x, bpb = mvr_bpb(p.T), rs = mvr_rs(p.T, SB), nb = p.K / 256, nk = p.K / (256 * MVR_KB);
    const int cb = MVR_KB * bpb, r1 = (int)((i64)p.M * (B + 1) / NB);
    for (int r0 = (int)((i64)p.M * B / NB); r0 < r1; r0 += rs) {
        const int n = min(rs, r1 - r0);
        for (int kc = 0; kc < nk; kc++)
            for (int j = 0; j < n; j++) {
                const uint8_t* row = p.w + (i64)(r0 + j) * p.ws;
                uint8_t* dst = rp + ((i64)r0 * nk + (i64)kc * n + j) * cb;
                const int k0 = MVR_KB * kc;
                // (source offset, destination offset, bytes) of the chunk's pieces
                const int pieces = p.T == T_Q4_K ? 1 : 4;
                const int so[4] = {p.T == T_Q4_K ? 144 * k0 : 128 * k0, 128 * nb + 64 * k0, 192 * nb + 16 * k0, 208 * nb + 2 * k0};
                const int dof[4] = {0, 128 * MVR_KB, 192 * MVR_KB, 208 * MVR_KB};
                const int len[4] = {p.T == T_Q4_K ? 144 * MVR_KB : 128 * MVR_KB, 64 * MVR_KB, 16 * MVR_KB, 2 * MVR_KB};
                for (int q = 0; q < pieces; q++)
                    for (int t = 16 * threadIdx.x; t < len[q]; t += 16 * blockDim.x)
                        *(uint4*)(dst + dof[q] + t) = *(const uint4*)(row + so[q] + t);
            }
    }
}

// mvr: grid one block an SM (cooperative), MVR_NW + 1 warps. Dynamic shared memory: the
// barriers (256 bytes), x4 and x6 (xn bytes each), then S stages of SB bytes (128-aligned).
__global__ void __launch_bounds__(MVR_NW * 32 + 32, 1) mvr(const Prod* P, const Group* G, int ng, unsigned* bar, int gap,
                                                          NormArgs na, int S, int SB, int xn, int fullrow, int nocomp) {
    extern __shared__ __align__(128) uint8_t sm[];
    __shared__ int last;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, B = blockIdx.x, NB = gridDim.x;
    uint8_t* x4 = sm + 256;
    uint8_t* x6 = x4 + xn;
    uint8_t* st = x6 + xn;
    st += (128 - ((uintptr_t)st & 127)) & 127;
    const uint32_t full = mvs_sa(sm), empty = full + 8 * MVS_MAXS;
    if (threadIdx.x == 0) {
        for (int s = 0; s < S; s++) mbar_init(full + 8 * s, 1), mbar_init(empty + 8 * s, MVR_NW);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();
    if (warp == MVR_NW) {  // the producer: every stage of the step, in order
        int i = 0;
        for (int g = 0; g < ng; g++)
            for (int pi = G[g].p0; pi < G[g].p0 + G[g].np; pi++) {
                const Prod p = P[pi];
                const int r1 = (int)((i64)p.M * (B + 1) / NB), bpb = mvr_bpb(p.T);
                const int rs = fullrow ? min(2 * MVR_NW, SB / (int)p.ws) : mvr_rs(p.T, SB), nk = fullrow ? 1 : p.K / (256 * MVR_KB);
                for (int r0 = (int)((i64)p.M * B / NB); r0 < r1; r0 += rs) {
                    const int n = min(rs, r1 - r0);
                    for (int kc = 0; kc < nk; kc++, i++) {
                        const int s = i % S;
                        if (lane == 0) {
                            if (i >= S) mbar_wait(empty + 8 * s, ((i / S) - 1) & 1);
                            mbar_expect(full + 8 * s, (uint32_t)(fullrow ? n * p.ws : n * MVR_KB * bpb));
                            if (fullrow) bulk_g2s(mvs_sa(st + (i64)s * SB), p.w + (i64)r0 * p.ws, (uint32_t)(n * p.ws), full + 8 * s);
                        }
                        __syncwarp();
                        if (!fullrow && p.rp) {  // repacked: the stage in one copy
                            if (lane == 0)
                                bulk_g2s(mvs_sa(st + (i64)s * SB), p.rp + ((i64)r0 * nk + (i64)kc * n) * MVR_KB * bpb,
                                         (uint32_t)(n * MVR_KB * bpb), full + 8 * s);
                        } else if (!fullrow && lane < n)
                            mvr_copy(p, r0 + lane, kc, mvs_sa(st + (i64)s * SB) + lane * MVR_KB * bpb, full + 8 * s);
                    }
                }
            }
        return;
    }
    int i = 0;
    for (int g = 0; g < ng; g++) {
        const Group gr = G[g];
        if (g > 0 && threadIdx.x == 0)
            while (ld_acquire(bar + 1) < (unsigned)g) {
            }
        asm volatile("bar.sync 1, %0;" ::"n"(MVR_NW * 32) : "memory");
        if (nocomp < 2) {  // the group's activation row, from L2, in both swizzles (NOCOMP=2: none)
            const Prod& p0 = P[gr.p0];
            const int K = p0.K, n = mv1_bytes(T_Q4_K, K);
            const uint32_t b4 = mvs_sa(x4), b6 = mvs_sa(x6);
            for (int q = threadIdx.x; q < n / 16; q += MVR_NW * 32) {
                const bool qs = q < K / 16;
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(b4 + 16 * (qs ? mv1_swz(q, 0) : q)), "l"(p0.x + 16 * q) : "memory");
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(b6 + 16 * (qs ? mv1_swz(q, 1) : q)), "l"(p0.x + 16 * q) : "memory");
            }
            asm volatile("cp.async.commit_group;" ::: "memory");
            asm volatile("cp.async.wait_all;" ::: "memory");
            asm volatile("bar.sync 1, %0;" ::"n"(MVR_NW * 32) : "memory");
        }
        for (int pi = gr.p0; pi < gr.p0 + gr.np; pi++) {
            const Prod p = P[pi];
            const int r1 = (int)((i64)p.M * (B + 1) / NB);
            const int rs = fullrow ? min(2 * MVR_NW, SB / (int)p.ws) : mvr_rs(p.T, SB), nk = fullrow ? 1 : p.K / (256 * MVR_KB);
            const int rb = fullrow ? (int)p.ws : MVR_KB * mvr_bpb(p.T);
            for (int r0 = (int)((i64)p.M * B / NB); r0 < r1; r0 += rs) {
                const int n = min(rs, r1 - r0), ra = 2 * warp, rbw = min(ra + 1, n - 1);
                float acc0 = 0, acc1 = 0;
                for (int kc = 0; kc < nk; kc++, i++) {
                    const int s = i % S;
                    mbar_wait(full + 8 * s, (i / S) & 1);
                    if (nocomp) {
                        if (ra < n) acc0 += (float)st[(i64)s * SB + ra * rb + lane];
                    } else if (fullrow && ra < n) {  // mvs's rows: sums already over the warp
                        float y[2];
                        const uint8_t* w = st + (i64)s * SB + ra * rb;
                        if (p.T == T_Q4_K) mvs_q4_k<2>(w, (rbw - ra) * rb, x4, p.K, y);
                        else mvs_q6_k<2>(w, (rbw - ra) * rb, x6, p.K, y);
                        acc0 = y[0], acc1 = y[1];
                    } else if (ra < n) {
                        const uint8_t* w = st + (i64)s * SB;
                        if (p.T == T_Q4_K) {
                            acc0 += mvr_q4_k(w + ra * rb, x4, p.K, kc);
                            acc1 += mvr_q4_k(w + rbw * rb, x4, p.K, kc);
                        } else {
                            acc0 += mvr_q6_k(w + ra * rb, x6, p.K, kc);
                            acc1 += mvr_q6_k(w + rbw * rb, x6, p.K, kc);
                        }
                    }
                    __syncwarp();
                    if (lane == 0) mbar_arrive(empty + 8 * s);
                }
                if (ra < n) {
                    const float y0 = fullrow && !nocomp ? acc0 : warp_sum(acc0), y1 = fullrow && !nocomp ? acc1 : warp_sum(acc1);
                    if (lane == 0) {
                        p.d[r0 + ra] = y0;
                        if (ra + 1 < n) p.d[r0 + ra + 1] = y1;
                    }
                }
            }
        }
        __threadfence();  // the group's outputs, before the arrival
        asm volatile("bar.sync 1, %0;" ::"n"(MVR_NW * 32) : "memory");
        if (threadIdx.x == 0) {
            last = atomicAdd(bar, 1) + 1 == (unsigned)(g + 1) * NB;
            __threadfence();
        }
        asm volatile("bar.sync 1, %0;" ::"n"(MVR_NW * 32) : "memory");
        if (last) {
            if (gr.a) {
                float wv[1][8];
                mvn_weights<MVR_NW * 32>(na.w, na.cols, wv);
                mvn_norm<MVR_NW * 32>(gr.a, na, wv);
                __threadfence();
            } else if (gap && threadIdx.x == 0)
                spin(gap);
            asm volatile("bar.sync 1, %0;" ::"n"(MVR_NW * 32) : "memory");
            if (threadIdx.x == 0) {
                __threadfence();
                atomicExch(bar + 1, (unsigned)(g + 1));
            }
        }
    }
}
