// attention_mla2.cu: a prompt's latent attention at depth, two tokens a block, in one pass
// over the keys. attention_mla (attention_dec.cu) takes a token a block, and where its
// scores do not fit shared memory it makes two passes (the statistics, then the
// probabilities and P V), so at a long context every block reads all of the layer's
// latent rows twice, from L2: at 16,384 positions a 512-token batch read ~20 GB a layer,
// and the kernel ran at about the L2's bandwidth (inference/backend/cuda/NOTES.md,
// session 82). Here warps 0-7 take token 2x and warps 8-15 token 2x + 1 over the same key
// tiles, which warps 0-7 copy, and each tile is read once: a quarter of the reads, and
// the scores made once, not twice.
//
// The softmax is online, as flash attention's: per tile, warp w of a group scores
// positions 8w.. (dec_scores), the group's eight warps meet their maxima in shared memory
// (the running max m of each row, the same in all of them), the probabilities exp(s - m)
// go to the group's P tile in f16, and the output sums and each lane's share of the row
// sums are rescaled by exp(m_old - m) when m grows; the output is divided by the row sum
// at the end. So the probabilities are rounded to f16 before they are normalised (as in
// llama.cpp's flash attention), not after (as attention_mla and the CPU reference do):
// the outputs agree with attention_mla's to that rounding. P V: warp w of a group takes
// output dims 72w .. 72w + 71 (nine n8 tiles) over all 64 positions of a tile, so that its
// sums fit the 128 registers of a 512-thread block.
//
// Grid ((n + 1) / 2, ceil(H / 16)): block (x, y) takes heads 16y.. of tokens 2x, 2x + 1,
// which must read one sequence's rows (the host launches it for one sequence's rows only).
// Arguments as attention_mla's; 512 threads; dynamic shared memory mla2_smem() (two query
// tiles, a ring of two key tiles, two P tiles).
#include "attention_one.cuh"

#define M2_D 576
#define M2_THREADS 512

__host__ __device__ constexpr int mla2_smem() { return 2 * (2 * 16 * M2_D) + 2 * (2 * DEC_K * M2_D) + 2 * 16 * DEC_PLD; }

// m2_ldsm_t2: ldmatrix .x2 .trans (lanes 0-15 give the rows' addresses).
__device__ __forceinline__ void m2_ldsm_t2(uint32_t* r, uint32_t a) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(a));
}

extern "C" __global__ void __launch_bounds__(M2_THREADS, 1)
attention_mla2(float* dst, i64 dstride, const float* q, i64 qstride, const uint16_t* k, i64 kstride, const int* pos,
               float scale, const int* table, int tcols, const int* seq, int bs, int n, int H) {
    pdl_entry();
    constexpr int D = M2_D, CPR = D / 8, stage = 2 * DEC_K * D;
    extern __shared__ __align__(16) uint8_t sm[];
    __shared__ float stat[M2_THREADS / 32][16][2];
    const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5, g = lane >> 2, tig = lane & 3;
    const int grp = w >> 3, wl = w & 7;  // the warp's token (0, 1) and its warp in the group
    const int h0 = 16 * blockIdx.y, nr = min(16, H - h0);
    const int i = 2 * blockIdx.x + grp;  // this group's token
    const bool live = i < n;
    const int i0 = 2 * blockIdx.x, i1 = min(i0 + 1, n - 1);
    const int* tab = table ? table + (i64)seq[i0] * tcols : 0;
    const int nkeys = live ? pos[i] + 1 : 0;
    const int nmax = max(pos[i0], pos[i1]) + 1;  // the tiles both tokens need
    const int ntile = (nmax + DEC_K - 1) / DEC_K;
    uint8_t* qsm = sm + grp * (2 * 16 * D);  // [16][D] f16, fragment-major (dec_qoff)
    uint8_t* ksm = sm + 2 * (2 * 16 * D);    // [2][DEC_K][D] f16, chunks swizzled (dec_copy)
    uint8_t* psm = ksm + 2 * stage + grp * (16 * DEC_PLD);  // [16][DEC_PLD bytes]
    const uint32_t ksa = (uint32_t)__cvta_generic_to_shared(ksm);
    const int sh = (bs & (bs - 1)) == 0 ? __ffs(bs) - 1 : -1;
    // Load tile s into slot s % 2; group 0 copies (dec_rows and dec_copy are written for
    // eight warps), one commit group a step.
    auto load = [&](int s) {
        if (grp == 0) {
            if (s < ntile) {
                const int mine = dec_rows<D>(tab, bs, sh, s * DEC_K, nmax);
                dec_copy<D>(ksa + (s & 1) * stage, k, (int)kstride, mine);
            }
            tc_commit();
        }
    };
    load(0);
    if (live) {  // the query tile in f16 (rows nr.. zeros), head-major rows: q + (h0 + r) n qstride
        const float* q0 = q + ((i64)h0 * n + i) * qstride;
        for (int e = tid & 255; e < 16 * CPR; e += 256) {
            const int r = e / CPR, c = e % CPR;
            float qv[8];
            if (r < nr) {
                const float* src = q0 + (i64)r * n * qstride + 8 * c;
#pragma unroll
                for (int j = 0; j < 8; j++) qv[j] = src[j];
            } else {
#pragma unroll
                for (int j = 0; j < 8; j++) qv[j] = 0.0f;
            }
            uint32_t hv[4];
#pragma unroll
            for (int j = 0; j < 4; j++) hv[j] = f2h(qv[2 * j]) | ((uint32_t)f2h(qv[2 * j + 1]) << 16);
            *(uint4*)(qsm + dec_qoff(r, c)) = make_uint4(hv[0], hv[1], hv[2], hv[3]);
        }
    }
    const uint32_t qa = (uint32_t)__cvta_generic_to_shared(qsm) + 16 * lane;
    const uint32_t kro = (8 * wl + (lane & 7)) * (2 * D);
    const uint32_t kx0 = (((lane >> 3) ^ (lane & 7)) << 4), kx1 = (((4 + (lane >> 3)) ^ (lane & 7)) << 4);
    const uint32_t pla = (uint32_t)__cvta_generic_to_shared(psm) + (lane & 15) * DEC_PLD + 16 * (lane >> 4);
    const int vr = (lane & 7) + (((lane >> 3) & 1) << 3);  // the lane's row of a 16-position block
    const int cb = 9 * wl;                                  // the warp's first 16-byte chunk (8 dims)
    // m0, m1: the group's running max of rows g and g + 8 (the same in all its warps);
    // l0, l1: this lane's sums of its positions' exp(s - m), rescaled as m grows.
    float m0 = -INFINITY, m1 = -INFINITY, l0 = 0, l1 = 0;
    float o[9][4];
#pragma unroll
    for (int j = 0; j < 9; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) o[j][e] = 0;
    for (int it = 0; it < ntile; it++) {
        load(it + 1);
        asm volatile("cp.async.wait_group 1;" ::: "memory");
        __syncthreads();  // tile it
        const uint32_t slot = ksa + (it & 1) * stage;
        float sc[4];
        // dec_scores places warp w's positions at t0 + 8w: t0 less 64 grp for group 1
        dec_scores<D>(sc, qa, slot + kro, kx0, kx1, it * DEC_K - 64 * grp, nkeys, scale);
        float x0 = fmaxf(sc[0], sc[1]), x1 = fmaxf(sc[2], sc[3]);
        x0 = fmaxf(x0, __shfl_xor_sync(0xffffffffu, x0, 1));
        x0 = fmaxf(x0, __shfl_xor_sync(0xffffffffu, x0, 2));
        x1 = fmaxf(x1, __shfl_xor_sync(0xffffffffu, x1, 1));
        x1 = fmaxf(x1, __shfl_xor_sync(0xffffffffu, x1, 2));
        if (tig == 0) stat[w][g][0] = x0, stat[w][g + 8][0] = x1;
        __syncthreads();  // the warps' maxima
        float n0 = m0, n1 = m1;  // the group's max after this tile, in warp order
#pragma unroll
        for (int j = 0; j < 8; j++) n0 = fmaxf(n0, stat[8 * grp + j][g][0]), n1 = fmaxf(n1, stat[8 * grp + j][g + 8][0]);
        // exp(-inf - -inf) is NaN: a row whose positions so far are all past its end
        // (an idle token) keeps zeros
        const float e0 = n0 == m0 ? 1.0f : expf(m0 - n0), e1 = n1 == m1 ? 1.0f : expf(m1 - n1);
        const float p0 = n0 == -INFINITY ? 0.0f : expf(sc[0] - n0), p1 = n0 == -INFINITY ? 0.0f : expf(sc[1] - n0);
        const float p2 = n1 == -INFINITY ? 0.0f : expf(sc[2] - n1), p3 = n1 == -INFINITY ? 0.0f : expf(sc[3] - n1);
        const uint32_t h01 = f2h(p0) | ((uint32_t)f2h(p1) << 16), h23 = f2h(p2) | ((uint32_t)f2h(p3) << 16);
        l0 = l0 * e0 + (p0 + p1);
        l1 = l1 * e1 + (p2 + p3);
        m0 = n0;
        m1 = n1;
        const int col = 16 * wl + 4 * tig;  // byte offset of positions 8 wl + 2 tig, +1
        *(uint32_t*)(psm + g * DEC_PLD + col) = h01;
        *(uint32_t*)(psm + (g + 8) * DEC_PLD + col) = h23;
        if (e0 != 1.0f || e1 != 1.0f) {
#pragma unroll
            for (int j = 0; j < 9; j++) o[j][0] *= e0, o[j][1] *= e0, o[j][2] *= e1, o[j][3] *= e1;
        }
        __syncthreads();  // the P tiles
        if (it * DEC_K < nkeys) {
#pragma unroll
            for (int kb = 0; kb < DEC_K / 16; kb++) {
                if (it * DEC_K + 16 * kb >= nkeys) break;  // the rest of the tile is past the end
                uint32_t pa[4];
                tc_ldsm_at(pa, pla + 32 * kb);
                const int r = 16 * kb + vr;
                const uint32_t rb = slot + r * (2 * D);
#pragma unroll
                for (int jj = 0; jj < 4; jj++) {
                    const int ch = cb + 2 * jj + (lane >> 4);
                    uint32_t b[4];
                    tc_ldsm_t_at(b, rb + ((ch ^ (r & 7)) << 4));
                    tc_mma(o[2 * jj], pa, b[0], b[1]);
                    tc_mma(o[2 * jj + 1], pa, b[2], b[3]);
                }
                uint32_t b2[2];
                m2_ldsm_t2(b2, rb + (((cb + 8) ^ (r & 7)) << 4));  // lanes 0-15's rows; the others' unused
                tc_mma(o[8], pa, b2[0], b2[1]);
            }
        }
        __syncthreads();  // the slot, the P tiles and stat are free
    }
    // the rows' sums: the lanes' (against the same final max), then the warps' in order
    l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
    l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
    if (tig == 0) stat[w][g][1] = l0, stat[w][g + 8][1] = l1;
    __syncthreads();
    float L0 = 0, L1 = 0;
#pragma unroll
    for (int j = 0; j < 8; j++) L0 += stat[8 * grp + j][g][1], L1 += stat[8 * grp + j][g + 8][1];
    const float inv0 = 1.0f / L0, inv1 = 1.0f / L1;
    asm volatile("cp.async.wait_all;" ::: "memory");
    if (!live) return;
    float* d0 = dst + ((i64)h0 * n + i) * dstride;  // head-major rows, as q
#pragma unroll
    for (int j = 0; j < 9; j++) {
        const int c = 8 * (cb + j) + 2 * tig;
        if (g < nr) *(float2*)(d0 + (i64)g * n * dstride + c) = make_float2(o[j][0] * inv0, o[j][1] * inv0);
        if (g + 8 < nr) *(float2*)(d0 + (i64)(g + 8) * n * dstride + c) = make_float2(o[j][2] * inv1, o[j][3] * inv1);
    }
}
