// attention_long.cu: attention_decD_1lN (N = 1, 2, 4, 8; and their _q8 twins), decode
// attention for one row, or rows that are each their sequence's one new position, on
// attention_decD_1c's cluster of AL_CL blocks a KV head, each block a chunk of the row of
// up to N tiles of AL_T positions, on AL_W warps: up to AL_CL * N * AL_T positions.
// attention_decD's arguments (DEC_ARGS), grid (rows, nkv * AL_CL), 32 AL_W threads,
// al_smem(D) bytes of dynamic shared memory; scap and ns unused.
//
// A block's 2N loads (its key tiles, then its value tiles) pass through two slots of
// shared memory; the first two are copied before the wait (but the newest position's
// rows, which the kernel before wrote: stored from registers after it). Each key tile's
// scores (dec_scores' bits; warp w takes the groups of 8 positions j = w, w + AL_W, ..)
// stay in registers, and its slot then takes the load after the next. The softmax
// statistics meet as in attention_decD_1c (the warps' in warp order, then the cluster's
// blocks' in block order), the probabilities are rounded to f16 against the row's M and
// L as the one-block kernel rounds them, and each value tile's P V goes into the
// accumulators, warp w taking dims D/4 (w % 4) .. over the tile's 16-position blocks kb
// = w / 4, w / 4 + AL_W / 4, ..; the AL_W / 4 parts add in order, block 0 adds the
// blocks' sums in block order and rounds the output for the next product.
//
// Session 38: the first form, 4 warps a block (attention_decD_1's), issued one
// instruction in ~7.5 cycles with one warp a scheduler (ncu), 74 us a layer at 8,000
// positions against attention_split1's 47.
#include "attention_one.cuh"

#define AL_CL A1_CL  // blocks a KV head: one cluster
#define AL_T A1_N    // positions a tile
#ifndef AL_W
#define AL_W 16  // warps a block (-DAL_W= for timing other widths: dec1lThreads must follow)
#endif
// al_smem: the query tile, two slots of AL_T rows, the P rows of a tile, the output rows
__host__ __device__ constexpr int al_smem(int d) { return a1_smem(d, AL_T); }

template <int D, bool Q80, int NT>
__device__ __forceinline__ void dec1_long(float* dst, const float* q, const uint16_t* k, int kstride, const uint16_t* v,
                                          int vstride, const int* tab, int bs, int nk, int G, float scale, uint8_t* q8,
                                          int q8b, int q8k, uint16_t* q8h, int q8s1) {
    extern __shared__ __align__(128) uint8_t sm[];
    __shared__ float stat[AL_W][16][2];
    __shared__ float cst[16][2];
    constexpr int T = 32 * AL_W, CAP = AL_T, pld = a1_pld(CAP), CPR = D / 8, NG = CAP / (8 * AL_W), NJ = D / 32;
    constexpr int NP = AL_W / 4;            // P V's parts (position blocks a warp skips)
    uint8_t* qsm = sm;                      // [16][D] f16, fragment-major (dec_qoff)
    uint8_t* s0 = qsm + 2 * 16 * D;         // two slots of [CAP][D] f16 rows, chunks swizzled
    uint8_t* psm = s0 + 2 * (2 * CAP * D);  // [16][pld bytes] a tile's probabilities
    float* red = (float*)(psm + 16 * pld);  // [16][D] the block's output, for the sum and the rounding
    const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5, g = lane >> 2, tig = lane & 3;
    const int rank = blockIdx.y % AL_CL;
    const int chunk = ((nk + AL_CL - 1) / AL_CL + 15) & ~15;  // at most NT * CAP (the host's choice)
    const int t0 = rank * chunk, nl = max(0, min(nk - t0, chunk));
    const int sh = (bs & (bs - 1)) == 0 ? __ffs(bs) - 1 : -1;
    auto crow = [&](int t) { return !tab ? t : sh >= 0 ? tab[t >> sh] * bs + (t & (bs - 1)) : tab[t / bs] * bs + t % bs; };
    const uint32_t sa = (uint32_t)__cvta_generic_to_shared(s0);
    // load L (key tile L, then value tile L - NT) into slot L % 2: its rows (zeros past nl
    // to the next 16), but the newest position's when skip (before the wait); one commit
    // group a call, empty past the last load
    auto load = [&](int L, bool skip) {
        if (L < 2 * NT) {
            const int t = L < NT ? L : L - NT, base = t * CAP, n = min(CAP, nl - base), nz = (n + 15) & ~15;
            const uint16_t* src = L < NT ? k : v;
            const int stride = L < NT ? kstride : vstride;
            const uint32_t s = sa + (L & 1) * (2 * CAP * D);
            for (int e = tid; e < nz * CPR; e += T) {
                const int r = e / CPR, c = e % CPR;
                if (skip && t0 + base + r == nk - 1) continue;
                const bool ok = r < n;
                const int cr = ok ? crow(t0 + base + r) : 0;
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(s + r * (2 * D) + ((c ^ (r & 7)) << 4)),
                             "l"(src + (i64)cr * stride + 8 * c), "r"(ok ? 16 : 0)
                             : "memory");
            }
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
    };
    load(0, true);
    load(1, true);
    const int cn = crow(nk - 1), ln = nk - 1 - t0;  // the newest position, local
    pdl_wait();
    if (tid < 2 * CPR && (unsigned)ln < (unsigned)nl) {  // its rows where loads 0 and 1 skipped them
        const int c = tid % CPR, L = tid < CPR ? ln / CAP : NT + ln / CAP, r = ln % CAP;
        if (L < 2) {
            const uint16_t* src = L < NT ? k + (i64)cn * kstride : v + (i64)cn * vstride;
            *(uint4*)(s0 + L * (2 * CAP * D) + r * (2 * D) + ((c ^ (r & 7)) << 4)) = *(const uint4*)(src + 8 * c);
        }
    }
    for (int e = tid; e < 16 * CPR; e += T) {  // the query tile in f16 (rows G.. zeros), as dec_attend builds it
        const int r = e / CPR, c = e % CPR;
        float qv[8];
        if (r < G) {
            const float* src = q + (i64)r * D + 8 * c;
            const float4 a = *(const float4*)src, b = *(const float4*)(src + 4);
            qv[0] = a.x, qv[1] = a.y, qv[2] = a.z, qv[3] = a.w, qv[4] = b.x, qv[5] = b.y, qv[6] = b.z, qv[7] = b.w;
        } else {
#pragma unroll
            for (int j = 0; j < 8; j++) qv[j] = 0.0f;
        }
        uint32_t hv[4];
#pragma unroll
        for (int j = 0; j < 4; j++) hv[j] = f2h(qv[2 * j]) | ((uint32_t)f2h(qv[2 * j + 1]) << 16);
        *(uint4*)(qsm + dec_qoff(r, c)) = make_uint4(hv[0], hv[1], hv[2], hv[3]);
    }
    // The keys: tile t is load t (slot t % 2)
    const uint32_t qa = (uint32_t)__cvta_generic_to_shared(qsm) + 16 * lane;
    const uint32_t kx0 = (((lane >> 3) ^ (lane & 7)) << 4), kx1 = (((4 + (lane >> 3)) ^ (lane & 7)) << 4);
    float sc[NT][NG][4];
    float m0 = -INFINITY, m1 = -INFINITY;
#pragma unroll
    for (int t = 0; t < NT; t++) {
        asm volatile("cp.async.wait_group 1;" ::: "memory");  // all but the most recent: load t
        __syncthreads();  // tile t's keys (and the query tile, the newest rows)
#pragma unroll
        for (int i = 0; i < NG; i++) {
            const int j = w + AL_W * i, p = t * CAP + 8 * j;  // the group's first position, local
            if (p < nl) {
                dec_scores<D>(sc[t][i], qa, sa + (t & 1) * (2 * CAP * D) + (8 * j + (lane & 7)) * (2 * D), kx0, kx1,
                              p - 8 * w, nl, scale);
            } else {
#pragma unroll
                for (int e = 0; e < 4; e++) sc[t][i][e] = -INFINITY;
            }
            m0 = fmaxf(m0, fmaxf(sc[t][i][0], sc[t][i][1])), m1 = fmaxf(m1, fmaxf(sc[t][i][2], sc[t][i][3]));
        }
        if (t + 2 < 2 * NT) __syncthreads();  // the slot is free for load t + 2
        load(t + 2, false);
    }
    m0 = fmaxf(m0, __shfl_xor_sync(0xffffffffu, m0, 1)), m0 = fmaxf(m0, __shfl_xor_sync(0xffffffffu, m0, 2));
    m1 = fmaxf(m1, __shfl_xor_sync(0xffffffffu, m1, 1)), m1 = fmaxf(m1, __shfl_xor_sync(0xffffffffu, m1, 2));
    float s0s = 0, s1s = 0;
#pragma unroll
    for (int t = 0; t < NT; t++)
#pragma unroll
        for (int i = 0; i < NG; i++) {
            if (m0 > -INFINITY) s0s += expf(sc[t][i][0] - m0) + expf(sc[t][i][1] - m0);
            if (m1 > -INFINITY) s1s += expf(sc[t][i][2] - m1) + expf(sc[t][i][3] - m1);
        }
    s0s += __shfl_xor_sync(0xffffffffu, s0s, 1), s0s += __shfl_xor_sync(0xffffffffu, s0s, 2);
    s1s += __shfl_xor_sync(0xffffffffu, s1s, 1), s1s += __shfl_xor_sync(0xffffffffu, s1s, 2);
    if (tig == 0) stat[w][g][0] = m0, stat[w][g][1] = s0s, stat[w][g + 8][0] = m1, stat[w][g + 8][1] = s1s;
    __syncthreads();  // the warps' statistics
    float M0, M1, L0, L1;
    dec1_stats<AL_W>(stat, g, M0, M1, L0, L1);
    const int nact = (nk + chunk - 1) / chunk;  // the cluster's blocks with positions
    dec1_cluster_stats(cst, w == 0 && tig == 0, g, nact, M0, M1, L0, L1);  // the row's, in block order
    const float inv0 = 1.0f / L0, inv1 = 1.0f / L1;
    // The values: tile t is load NT + t; its probabilities, then its P V
    float o[NJ][4];
#pragma unroll
    for (int j = 0; j < NJ; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) o[j][e] = 0;
    const int dq = w & 3, part = w >> 2;  // the warp's dims D/4 dq .. and position blocks part, part + NP, ..
    const uint32_t pla = (uint32_t)__cvta_generic_to_shared(psm) + (lane & 15) * pld + 16 * (lane >> 4);
    const int vr = (lane & 7) + (((lane >> 3) & 1) << 3);  // the lane's row of a 16-position block
#pragma unroll
    for (int t = 0; t < NT; t++) {
        const int nz = min(CAP, max(0, ((nl + 15) & ~15) - t * CAP));  // the tile's rows through its last 16
        if (t > 0) __syncthreads();  // the probabilities of tile t - 1 are read
#pragma unroll
        for (int i = 0; i < NG; i++) {
            const int j = w + AL_W * i;
            if (8 * j < nz) {  // positions 8j + 2 tig, + 1 of the tile (zeros past nl)
                const int col = 2 * (8 * j + 2 * tig);
                *(uint32_t*)(psm + g * pld + col) = tc_prob(sc[t][i][0], M0, inv0) | (tc_prob(sc[t][i][1], M0, inv0) << 16);
                *(uint32_t*)(psm + (g + 8) * pld + col) = tc_prob(sc[t][i][2], M1, inv1) | (tc_prob(sc[t][i][3], M1, inv1) << 16);
            }
        }
        asm volatile("cp.async.wait_group 1;" ::: "memory");  // load NT + t
        __syncthreads();  // the probabilities and value tile t
        const uint32_t vs = sa + ((NT + t) & 1) * (2 * CAP * D);
        for (int kb = part; kb < nz / 16; kb += NP) {
            uint32_t pa[4];
            tc_ldsm_at(pa, pla + 32 * kb);
            const int r = 16 * kb + vr;
#pragma unroll
            for (int jj = 0; jj < NJ / 2; jj++) {
                const int ch = NJ * dq + 2 * jj + (lane >> 4);
                uint32_t b[4];
                tc_ldsm_t_at(b, vs + r * (2 * D) + ((ch ^ (r & 7)) << 4));
                tc_mma(o[2 * jj], pa, b[0], b[1]);
                tc_mma(o[2 * jj + 1], pa, b[2], b[3]);
            }
        }
        if (NT + t + 2 < 2 * NT) __syncthreads();  // the slot is free for load NT + t + 2
        load(NT + t + 2, false);  // (an empty group past the last: each wait leaves the newest pending)
    }
    __syncthreads();  // every slot is read: the parts' sums go to slot 0, [part][16][D]
    float* ps = (float*)s0;
#pragma unroll
    for (int j = 0; j < NJ; j++) {  // rows g, g + 8 (heads); dims D/4 dq + 8j + 2 tig, + 1
        const int d0 = (D / 4) * dq + 8 * j + 2 * tig;
        *(float2*)(ps + (part * 16 + g) * D + d0) = make_float2(o[j][0], o[j][1]);
        *(float2*)(ps + (part * 16 + g + 8) * D + d0) = make_float2(o[j][2], o[j][3]);
    }
    __syncthreads();  // the parts' sums
    for (int e = tid; e < G * D; e += T) {  // the block's, parts in order; block 0 adds the cluster's in block order
        float s = 0;
#pragma unroll
        for (int u = 0; u < NP; u++) s += ps[u * 16 * D + e];
        red[e] = s;
    }
    if (!dec1_cluster_sum<T>(dst, red, G * D, rank, nact)) return;
    if (!q8) return;
    __syncthreads();  // the output, for the rounding
    dec1_round<Q80, AL_W>(red, G * D, lane, w, q8, q8b, q8k, q8h, q8s1);
}

#define AL_BODY(D, Q80, S1, NT)                                                                                         \
    const int i = blockIdx.x, kvh = blockIdx.y / AL_CL, G = nhead / nkv;                                                \
    const int* tab = table ? table + (i64)seq[i] * tcols : 0;                                                           \
    dec1_long<D, Q80, NT>(dst + (i64)i * dstride + (i64)kvh * G * D, q + (i64)i * qstride + (i64)kvh * G * D,           \
                          k + kvh * D, (int)kstride, v + kvh * D, (int)vstride, tab, bs, pos[i] + 1, G, scale,          \
                          q8 ? q8 + (i64)i * q8stride : nullptr, kvh * G * D / (Q80 ? 32 : 256), nhead * D,             \
                          q8h && !Q80 ? (uint16_t*)(q8h + (i64)i * q8hstride) : nullptr, S1);
#define AL_KERNEL(D, NT, NAME)                                                                                          \
    extern "C" __global__ void __cluster_dims__(1, AL_CL, 1) __launch_bounds__(32 * AL_W, 1) NAME(DEC_ARGS) {               \
        pdl_defer();                                                                                                    \
        AL_BODY(D, false, 0, NT)                                                                                        \
    }                                                                                                                   \
    extern "C" __global__ void __cluster_dims__(1, AL_CL, 1) __launch_bounds__(32 * AL_W, 1) NAME##_q8(DEC_ARGS, int s1) {  \
        pdl_defer();                                                                                                    \
        AL_BODY(D, true, s1, NT)                                                                                        \
    }
AL_KERNEL(64, 1, attention_dec64_1l1)
AL_KERNEL(64, 2, attention_dec64_1l2)
AL_KERNEL(64, 4, attention_dec64_1l4)
AL_KERNEL(64, 8, attention_dec64_1l8)
AL_KERNEL(128, 1, attention_dec128_1l1)
AL_KERNEL(128, 2, attention_dec128_1l2)
AL_KERNEL(128, 4, attention_dec128_1l4)
AL_KERNEL(128, 8, attention_dec128_1l8)
