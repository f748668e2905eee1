// attention_one.cuh: dec1_attend, attention_dec.cu's decode attention for one row over
// at most A1_N positions (attention_decD_1: attention_decD's arguments, DEC_ARGS; paged
// caches through the block table, G = nhead / nkv <= 16 query heads a KV head, head dims
// 64 or 128, the output's rounding to Q8_K (with its f16 rows, q8h) or, with Q80, to
// Q8_0 (s1: Q8_1)). build/micro/att1.cu times it against attention_dec128.
//
// A block per KV head (grid (1, nkv)), 4 warps. Before its wait it reads the block table
// and copies the keys and values of every position but the newest (rows written by
// earlier steps) into shared memory, zeros past the positions to the next 16; after it,
// the query and the newest rows (one round trip); every position's scores at once
// (dec_scores, so each score has attention_decD's bits), kept in registers; the softmax
// statistics meet once; the probabilities (rounded to f16 as the reference does) go to
// shared memory; each warp takes D/4 output dims over all positions (no halves to meet);
// the output and its rounding (a warp a 256-element Q8_K block, or 32-element Q8_0
// blocks). Four barriers after the wait. The softmax sums and P V run in other orders
// than attention_decD's, so outputs differ from its in the last bits.
//
// With CL > 1 (attention_decD_1c: a KV head's CL blocks are one thread block cluster)
// block r of the cluster takes the positions r chunk .. of the row (chunk: nk / CL
// rounded up to 16, at most CAP): up to CL * CAP positions. Each block finds its heads'
// maximum and sum over its positions; the cluster's blocks read each other's (from
// distributed shared memory) for the row's M and L (the sums in block order), round
// their probabilities against those as the one block does, and leave their P V sums in
// their shared memory, which block 0 adds in block order for the output and its
// rounding. Two cluster barriers (three for block 0) on top of the block's four.
#pragma once
#include "attention_dec.cuh"

#define A1_N 256  // positions attention_decD_1 takes
#define A1_CL 8    // attention_decD_1c's blocks a KV head (a cluster), and attention_long.cu's
// DEC_ARGS: attention_decD's arguments (attention_dec.cu), which the one-row kernels share.
#define DEC_ARGS                                                                                                        \
    float *dst, i64 dstride, const float *q, i64 qstride, const uint16_t *k, i64 kstride, const uint16_t *v,            \
        i64 vstride, const int *pos, int nhead, int nkv, int hd, int vhd, float scale, const int *table, int tcols,     \
        const int *seq, int bs, int scap, int ns, uint8_t *q8, i64 q8stride, uint8_t *q8h, i64 q8hstride
// a1_pld is the bytes of a P row of cap positions (padded: ldmatrix's rows miss each
// other's banks); a1_smem the dynamic shared memory for cap positions of d dims. The
// kernels come in caps of 64, 128 and 256 (A1_N) positions: fewer score groups a warp in
// registers and loops (session 34: 9.5 us a layer at one position in att1.cu's chain with
// a cap of 64, 9.8 with 128, 10.6 with 256).
__host__ __device__ constexpr int a1_pld(int cap) { return 2 * cap + 16; }
__host__ __device__ constexpr int a1_smem(int d, int cap) { return 2 * 16 * d + 2 * (2 * cap * d) + 16 * a1_pld(cap) + 16 * d * 4; }

// dec1_stats: the block's maximum M and sum L (against M) of rows g and g + 8 from its W
// warps' own (stat[w][row] = {max, sum}), in warp order.
template <int W>
__device__ __forceinline__ void dec1_stats(const float (*stat)[16][2], int g, float& M0, float& M1, float& L0, float& L1) {
    M0 = -INFINITY, M1 = -INFINITY, L0 = 0, L1 = 0;
#pragma unroll
    for (int u = 0; u < W; u++) M0 = fmaxf(M0, stat[u][g][0]), M1 = fmaxf(M1, stat[u][g + 8][0]);
#pragma unroll
    for (int u = 0; u < W; u++) {
        if (stat[u][g][0] > -INFINITY) L0 += stat[u][g][1] * expf(stat[u][g][0] - M0);
        if (stat[u][g + 8][0] > -INFINITY) L1 += stat[u][g + 8][1] * expf(stat[u][g + 8][0] - M1);
    }
}

// dec1_cluster_stats: the row's M and L from the block's (M0 .. L1, which warp 0's lanes
// of tig 0 leave in cst) and the cluster's other nact - 1 blocks' (read from their cst
// in distributed shared memory), in block order. A cluster barrier; every thread calls it.
__device__ __forceinline__ void dec1_cluster_stats(float (*cst)[2], bool lead, int g, int nact, float& M0, float& M1,
                                                   float& L0, float& L1) {
    if (lead) cst[g][0] = M0, cst[g][1] = L0, cst[g + 8][0] = M1, cst[g + 8][1] = L1;
    cluster_sync();
    float m0 = -INFINITY, m1 = -INFINITY, l0 = 0, l1 = 0;
    for (int r = 0; r < nact; r++) m0 = fmaxf(m0, cluster_ld(&cst[g][0], r)), m1 = fmaxf(m1, cluster_ld(&cst[g + 8][0], r));
    for (int r = 0; r < nact; r++) {
        const float a0 = cluster_ld(&cst[g][0], r), a1 = cluster_ld(&cst[g + 8][0], r);
        if (a0 > -INFINITY) l0 += cluster_ld(&cst[g][1], r) * expf(a0 - m0);
        if (a1 > -INFINITY) l1 += cluster_ld(&cst[g + 8][1], r) * expf(a1 - m1);
    }
    M0 = m0, M1 = m1, L0 = l0, L1 = l1;
}

// dec1_cluster_sum: the cluster's n output sums (each block's in its red) added in block
// order by block 0 (rank) into dst and its own red, T threads a block; the other blocks
// return false once block 0 has read them. Two cluster barriers.
template <int T>
__device__ __forceinline__ bool dec1_cluster_sum(float* dst, float* red, int n, int rank, int nact) {
    cluster_sync();  // every block's sums are in its shared memory
    if (rank != 0) {
        cluster_sync();  // block 0 has read them
        return false;
    }
    for (int e = threadIdx.x; e < n; e += T) {
        float s = 0;
        for (int r = 0; r < nact; r++) s += cluster_ld(&red[e], r);
        dst[e] = s;
        red[e] = s;
    }
    cluster_sync();  // the other blocks may leave
    return true;
}

// dec1_round: the output's n values in red rounded by the block's W warps (this thread
// lane of warp w), to Q8_K blocks q8b .. (a warp a 256-element block, with their f16
// values in q8h) or with Q80 to Q8_0 (s1: Q8_1) blocks of 32; q8k the Q8_K row's blocks.
template <bool Q80, int W>
__device__ __forceinline__ void dec1_round(const float* red, int n, int lane, int w, uint8_t* q8, int q8b, int q8k,
                                           uint16_t* q8h, int q8s1) {
    if (Q80) {
        for (int b = w; b < n / 32; b += W) q8_quant_lane(red[32 * b + lane], q8, q8b + b, q8k, q8s1);
        return;
    }
    for (int b = w; b < n / 256; b += W) {
        float vv[8];
#pragma unroll
        for (int i = 0; i < 8; i++) vv[i] = red[256 * b + 8 * lane + i];
        q8k_quant_warp(vv, q8, q8b + b, q8k, q8h);
    }
}

template <int D, bool Q80, int CAP, int CL = 1>
__device__ __forceinline__ void dec1_attend(float* dst, const float* q, const uint16_t* k, int kstride, const uint16_t* v,
                                            int vstride, const int* tab, int bs, int nk, int G, float scale, uint8_t* q8,
                                            int q8b, int q8k, uint16_t* q8h, int q8s1) {
    extern __shared__ __align__(128) uint8_t sm[];
    __shared__ float stat[4][16][2];
    uint8_t* qsm = sm;                         // [16][D] f16, fragment-major (dec_qoff)
    constexpr int pld = a1_pld(CAP);
    uint8_t* ksm = qsm + 2 * 16 * D;        // [CAP][D] f16, chunks swizzled as dec_copy's
    uint8_t* vsm = ksm + 2 * CAP * D;       // the same for the values
    uint8_t* psm = vsm + 2 * CAP * D;       // [16][pld bytes] probabilities
    float* red = (float*)(psm + 16 * pld);  // [16][D] the output, for the rounding
    const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5, g = lane >> 2, tig = lane & 3;
    constexpr int CPR = D / 8;  // 16-byte chunks a row
    // this block's positions: t0 .. t0 + nl - 1 (all nk but in a cluster)
    const int rank = CL > 1 ? blockIdx.y % CL : 0;
    const int chunk = CL > 1 ? ((nk + CL - 1) / CL + 15) & ~15 : nk;
    const int t0 = rank * chunk, nl = CL > 1 ? max(0, min(nk - t0, chunk)) : nk;
    const int nz = (nl + 15) & ~15;  // rows through the last 16-position block: zeros past nl
    const int sh = (bs & (bs - 1)) == 0 ? __ffs(bs) - 1 : -1;
    auto crow = [&](int t) { return !tab ? t : sh >= 0 ? tab[t >> sh] * bs + (t & (bs - 1)) : tab[t / bs] * bs + t % bs; };
    const uint32_t ksa = (uint32_t)__cvta_generic_to_shared(ksm), vsa = (uint32_t)__cvta_generic_to_shared(vsm);
    auto cp = [&](uint32_t s, const uint16_t* src, bool ok) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(s), "l"(src), "r"(ok ? 16 : 0) : "memory");
    };
    // the rows of positions before the newest (earlier steps wrote them), and zeros past nk
    for (int e = tid; e < nz * CPR; e += 128) {
        const int r = e / CPR, c = e % CPR;
        if (t0 + r == nk - 1) continue;
        const bool ok = r < nl;
        const int cr = ok ? crow(t0 + r) : 0;
        const uint32_t o = r * (2 * D) + ((c ^ (r & 7)) << 4);
        cp(ksa + o, k + (i64)cr * kstride + 8 * c, ok);
        cp(vsa + o, v + (i64)cr * vstride + 8 * c, ok);
    }
    const int cn = crow(nk - 1);
    pdl_wait();
    if (tid < CPR && (CL == 1 || (unsigned)(nk - 1 - t0) < (unsigned)nl)) {  // the newest position's rows (the kernel before wrote them)
        const int r = nk - 1 - t0, c = tid;
        const uint32_t o = r * (2 * D) + ((c ^ (r & 7)) << 4);
        cp(ksa + o, k + (i64)cn * kstride + 8 * c, true);
        cp(vsa + o, v + (i64)cn * vstride + 8 * c, true);
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
    {  // the query tile in f16 (rows G.. zeros), as dec_attend builds it
        constexpr int QCH = 16 * CPR, QPT = QCH / 128;
        float qv[QPT][8];
#pragma unroll
        for (int u = 0; u < QPT; u++) {
            const int e = tid + 128 * u, r = e / CPR, c = e % CPR;
            const float* src = q + (i64)r * D + 8 * c;
            if (r < G) {
                const float4 a = *(const float4*)src, b = *(const float4*)(src + 4);
                qv[u][0] = a.x, qv[u][1] = a.y, qv[u][2] = a.z, qv[u][3] = a.w, qv[u][4] = b.x, qv[u][5] = b.y, qv[u][6] = b.z, qv[u][7] = b.w;
            } else {
#pragma unroll
                for (int j = 0; j < 8; j++) qv[u][j] = 0.0f;
            }
        }
#pragma unroll
        for (int u = 0; u < QPT; u++) {
            const int e = tid + 128 * u, r = e / CPR, c = e % CPR;
            uint32_t hv[4];
#pragma unroll
            for (int j = 0; j < 4; j++) hv[j] = f2h(qv[u][2 * j]) | ((uint32_t)f2h(qv[u][2 * j + 1]) << 16);
            *(uint4*)(qsm + dec_qoff(r, c)) = make_uint4(hv[0], hv[1], hv[2], hv[3]);
        }
    }
    asm volatile("cp.async.wait_all;" ::: "memory");
    __syncthreads();  // 1: the query tile and every key and value row
    // scores: warp w takes the groups of 8 positions j = w, w + 4, ...; sc[i] the i-th's
    const uint32_t qa = (uint32_t)__cvta_generic_to_shared(qsm) + 16 * lane;
    const uint32_t kx0 = (((lane >> 3) ^ (lane & 7)) << 4), kx1 = (((4 + (lane >> 3)) ^ (lane & 7)) << 4);
    constexpr int NG = CAP / 32;  // groups a warp at most
    float sc[NG][4];
    float m0 = -INFINITY, m1 = -INFINITY;
#pragma unroll
    for (int i = 0; i < NG; i++) {
        const int j = w + 4 * i;
        if (8 * j < nl) {
            dec_scores<D>(sc[i], qa, ksa + (8 * j + (lane & 7)) * (2 * D), kx0, kx1, 8 * j - 8 * w, nl, scale);
        } else {
#pragma unroll
            for (int e = 0; e < 4; e++) sc[i][e] = -INFINITY;
        }
        m0 = fmaxf(m0, fmaxf(sc[i][0], sc[i][1])), m1 = fmaxf(m1, fmaxf(sc[i][2], sc[i][3]));
    }
    m0 = fmaxf(m0, __shfl_xor_sync(0xffffffffu, m0, 1)), m0 = fmaxf(m0, __shfl_xor_sync(0xffffffffu, m0, 2));
    m1 = fmaxf(m1, __shfl_xor_sync(0xffffffffu, m1, 1)), m1 = fmaxf(m1, __shfl_xor_sync(0xffffffffu, m1, 2));
    float s0 = 0, s1 = 0;
#pragma unroll
    for (int i = 0; i < NG; i++)
        if (m0 > -INFINITY) s0 += expf(sc[i][0] - m0) + expf(sc[i][1] - m0);
#pragma unroll
    for (int i = 0; i < NG; i++)
        if (m1 > -INFINITY) s1 += expf(sc[i][2] - m1) + expf(sc[i][3] - m1);
    s0 += __shfl_xor_sync(0xffffffffu, s0, 1), s0 += __shfl_xor_sync(0xffffffffu, s0, 2);
    s1 += __shfl_xor_sync(0xffffffffu, s1, 1), s1 += __shfl_xor_sync(0xffffffffu, s1, 2);
    if (tig == 0) stat[w][g][0] = m0, stat[w][g][1] = s0, stat[w][g + 8][0] = m1, stat[w][g + 8][1] = s1;
    __syncthreads();  // 2: the warps' statistics
    float M0, M1, L0, L1;
    dec1_stats<4>(stat, g, M0, M1, L0, L1);
    const int nact = (nk + chunk - 1) / chunk;  // the cluster's blocks with positions
    if (CL > 1) {  // the row's M and L from the cluster's blocks' own, in block order
        __shared__ float cst[16][2];
        dec1_cluster_stats(cst, w == 0 && tig == 0, g, nact, M0, M1, L0, L1);
    }
    const float inv0 = 1.0f / L0, inv1 = 1.0f / L1;
#pragma unroll
    for (int i = 0; i < NG; i++) {
        const int j = w + 4 * i;
        if (8 * j < nz) {  // the probabilities of positions 8j + 2 tig, + 1 (zeros past nk)
            const int col = 2 * (8 * j + 2 * tig);
            *(uint32_t*)(psm + g * pld + col) = tc_prob(sc[i][0], M0, inv0) | (tc_prob(sc[i][1], M0, inv0) << 16);
            *(uint32_t*)(psm + (g + 8) * pld + col) = tc_prob(sc[i][2], M1, inv1) | (tc_prob(sc[i][3], M1, inv1) << 16);
        }
    }
    __syncthreads();  // 3: the probabilities
    // P V: warp w takes dims D/4 w .. over every 16 positions (D/64 pairs of n8 tiles)
    constexpr int NJ = D / 32;  // n8 tiles a warp
    float o[NJ][4];
#pragma unroll
    for (int j = 0; j < NJ; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) o[j][e] = 0;
    const uint32_t pla = (uint32_t)__cvta_generic_to_shared(psm) + (lane & 15) * pld + 16 * (lane >> 4);
    const int vr = (lane & 7) + (((lane >> 3) & 1) << 3);  // the lane's row of a 16-position block
    for (int kb = 0; kb < nz / 16; kb++) {
        uint32_t pa[4];
        tc_ldsm_at(pa, pla + 32 * kb);
        const int r = 16 * kb + vr;
#pragma unroll
        for (int jj = 0; jj < NJ / 2; jj++) {
            const int ch = NJ * w + 2 * jj + (lane >> 4);
            uint32_t b[4];
            tc_ldsm_t_at(b, vsa + r * (2 * D) + ((ch ^ (r & 7)) << 4));
            tc_mma(o[2 * jj], pa, b[0], b[1]);
            tc_mma(o[2 * jj + 1], pa, b[2], b[3]);
        }
    }
    // the output: rows g (heads), dims D/4 w + 8j + 2 tig (+1); in a cluster, this
    // block's sums, which block 0 adds
#pragma unroll
    for (int j = 0; j < NJ; j++) {
        const int d0 = (D / 4) * w + 8 * j + 2 * tig;
        if (g < G) {
            if (CL == 1) *(float2*)(dst + (i64)g * D + d0) = make_float2(o[j][0], o[j][1]);
            *(float2*)(red + g * D + d0) = make_float2(o[j][0], o[j][1]);
        }
        if (g + 8 < G) {
            if (CL == 1) *(float2*)(dst + (i64)(g + 8) * D + d0) = make_float2(o[j][2], o[j][3]);
            *(float2*)(red + (g + 8) * D + d0) = make_float2(o[j][2], o[j][3]);
        }
    }
    if (CL > 1 && !dec1_cluster_sum<128>(dst, red, G * D, rank, nact)) return;
    if (!q8) return;
    __syncthreads();  // 4: the output, for the rounding
    dec1_round<Q80, 4>(red, G * D, lane, w, q8, q8b, q8k, q8h, q8s1);
}
