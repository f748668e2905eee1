// moe.cu: a mixture of experts on the device (inference/backend/cuda/moe.go): routing
// (moe_topk), the grouping of the (token, slot) pairs by expert for the tensor-core
// products (moe_group, whose tiles mmq.cu's mmq_id_* take), and the weighted sum of the
// experts' outputs (moe_sum).
#include "mv1.cuh"

// ---- mixture of experts on the device (inference/backend/cuda/moe.go) ----

#define MOE_MAX_EXPERTS 256

// moe_topk: the routing of deepseek2's route (inference/model/deepseek2/moe.go), with
// the same float operations: per token (a warp) probabilities by softmax (float exps of
// the max-shifted logits; their double sum taken in index order by one lane) or sigmoid;
// selection scores = probabilities + bias (optional); group limiting (the ngroup_used
// groups whose two best scores sum highest); the k best in descending order, ties to
// the lower index (a warp argmax per slot); their probabilities optionally normalised
// and scaled. logits [n, X]; ids (expert) and w (weight) [n, k], pair t*k + j.
// Lane l holds experts l + 32u (u < PL, moe_route) in registers: the logits are loaded
// at once, the bias (a weight) before the wait, and the selected weights are normalised
// and scaled in shared memory and written once (session 35: the read-backs of w from
// global memory between its stores were round trips on the routing's critical path).

// The routing's shared memory (one warp's).
struct MoeSmem {
    float probs[MOE_MAX_EXPERTS], score[MOE_MAX_EXPERTS], gsum[MOE_MAX_EXPERTS], wsel[MOE_MAX_EXPERTS];
    int keep[MOE_MAX_EXPERTS], isel[MOE_MAX_EXPERTS];
    float inv_s;
    int guess[MOE_MAX_EXPERTS / 8];  // moe_guess's experts (mmv_route)
    unsigned gmask[2];               // moe_guess's experts as bits: e < 32, e - 32
    int same;                        // whether moe_route chose them (mmv_route)
};

// moe_route is moe_topk's routing of one logits row by one warp, PL experts a lane
// (PL * 32 >= X; lanes past X hold nothing): bv the lane's biases (loaded before the
// kernel's wait), row the logits (read here, after it). It leaves the k experts in
// s.isel and their weights in s.wsel, complete for the warp (__syncwarp). moe_topk and
// mmv_route_q4_k take it with PL = 2 when X <= 64 (DeepSeek-V2-Lite's 64 experts), so
// the double exps and loops of the six unused slots a lane are not run (session 42);
// the other experts' values are the same either way.
template <int PL>
__device__ __forceinline__ void moe_route(MoeSmem& s, const float* row, const float* bv, bool bias, int X, int k, int ngroup,
                                          int ngroup_used, int sigmoid, int norm, float scale, bool guessed = false) {
    const int lane = threadIdx.x & 31;
    float v[PL], sc[PL];
    bool taken[PL];
#pragma unroll
    for (int u = 0; u < PL; u++) v[u] = lane + 32 * u < X ? row[lane + 32 * u] : 0.0f;
    if (sigmoid) {
#pragma unroll
        for (int u = 0; u < PL; u++) v[u] = 1.0f / (1.0f + (float)exp(-(double)v[u]));
    } else {
        float mx = -INFINITY;
#pragma unroll
        for (int u = 0; u < PL; u++)
            if (lane + 32 * u < X) mx = fmaxf(mx, v[u]);
        mx = warp_max(mx);
#pragma unroll
        for (int u = 0; u < PL; u++) {
            v[u] = (float)exp((double)(v[u] - mx));
            if (lane + 32 * u < X) s.probs[lane + 32 * u] = v[u];
        }
        // Their sum in double, in index order as the reference takes it. Where every
        // value is at least 2^(L-30) (L = ceil(log2 X)), each is a multiple of 2^(L-53)
        // and every partial sum (at most X <= 2^L) is exact in double: any order gives
        // the serial sum's bits, so the warp takes it in parallel; else lane 0 alone.
        const int L = 32 - __clz(X - 1);
        const float thr = __int_as_float((L - 30 + 127) << 23);
        double part = 0;
        bool exact = true;
#pragma unroll
        for (int u = 0; u < PL; u++)
            if (lane + 32 * u < X) part += (double)v[u], exact = exact && v[u] >= thr;
        float inv;
        if (__all_sync(0xffffffffu, exact)) {
            inv = (float)(1.0 / warp_sumd(part));
        } else {
            __syncwarp();
            if (lane == 0) {
                double sum = 0;
                for (int e = 0; e < X; e++) sum += (double)s.probs[e];
                s.inv_s = (float)(1.0 / sum);
            }
            __syncwarp();
            inv = s.inv_s;
        }
#pragma unroll
        for (int u = 0; u < PL; u++) v[u] *= inv;
    }
#pragma unroll
    for (int u = 0; u < PL; u++) {
        const int e = lane + 32 * u;
        sc[u] = bias ? v[u] + bv[u] : v[u];
        taken[u] = e >= X;
        if (e < X) s.probs[e] = v[u];
    }
    if (ngroup > 1 && ngroup_used < ngroup) {
#pragma unroll
        for (int u = 0; u < PL; u++)
            if (lane + 32 * u < X) s.score[lane + 32 * u] = sc[u];
        __syncwarp();
        const int per = X / ngroup;
        for (int g = lane; g < ngroup; g += 32) {
            float a = -INFINITY, b = -INFINITY;
            for (int e = g * per; e < (g + 1) * per; e++) {
                const float x = s.score[e];
                if (x > a) {
                    b = a;
                    a = x;
                } else if (x > b) {
                    b = x;
                }
            }
            s.gsum[g] = a + b;
            s.keep[g] = 0;
        }
        __syncwarp();
        if (lane == 0)
            for (int u = 0; u < ngroup_used; u++) {
                int best = -1;
                for (int g = 0; g < ngroup; g++)
                    if (!s.keep[g] && (best < 0 || s.gsum[g] > s.gsum[best])) best = g;
                s.keep[best] = 1;
            }
        __syncwarp();
#pragma unroll
        for (int u = 0; u < PL; u++)
            if (lane + 32 * u < X && !s.keep[(lane + 32 * u) / per]) sc[u] = -INFINITY;
    }
    __syncwarp();  // probs complete for lane 0's reads below
    // With moe_guess's experts in s.guess (softmax, no biases or group limits, PL 2), the
    // rounds below would choose exactly them, in their order, if no score is NaN, each
    // guessed expert ranks above the next (a higher score, or an equal one and a lower
    // index: the rounds' order) and every other expert below the last guessed one. Those
    // checks are one pass and a vote instead of k rounds of a warp argmax on the routing's
    // critical path (+0.9% tok/s on V2-Lite, s76-call3, H100); where any fails, the
    // rounds run.
    int rounds = k;
    if (guessed) asm volatile("bar.sync 2, 64;" ::: "memory");  // mmv_route: warp 0's guess is in s
    if (PL == 2 && guessed && k <= 32 && k <= X) {
        const int gl = s.guess[k - 1];
        const float t = s.probs[gl];
        bool ok = true;
#pragma unroll
        for (int u = 0; u < PL; u++) {
            const int e = lane + 32 * u;
            if (e < X) {
                ok = ok && sc[u] == sc[u];
                if (!((s.gmask[u] >> lane) & 1u)) ok = ok && (t > sc[u] || (t == sc[u] && gl < e));
            }
        }
        if (lane >= 1 && lane < k) {
            const int a = s.guess[lane - 1], b = s.guess[lane];
            const float pa = s.probs[a], pb = s.probs[b];
            ok = ok && (pa > pb || (pa == pb && a < b));
        }
        if (__all_sync(0xffffffffu, ok)) {
            if (lane < k) {
                const int e = s.guess[lane];
                s.isel[lane] = e, s.wsel[lane] = s.probs[e];
            }
            rounds = 0;
        }
        __syncwarp();  // s.isel, s.wsel complete for the warp
    }
    for (int j = 0; j < rounds; j++) {
        int be = -1;
        float bs = 0;
#pragma unroll
        for (int u = 0; u < PL; u++)
            if (!taken[u] && (be < 0 || sc[u] > bs)) {
                be = lane + 32 * u;
                bs = sc[u];
            }
        for (int o = 16; o > 0; o >>= 1) {
            const int oe = __shfl_xor_sync(0xffffffffu, be, o);
            const float os = __shfl_xor_sync(0xffffffffu, bs, o);
            if (oe >= 0 && (be < 0 || os > bs || (os == bs && oe < be))) {
                be = oe;
                bs = os;
            }
        }
#pragma unroll
        for (int u = 0; u < PL; u++)
            if (be == lane + 32 * u) taken[u] = true;
        if (lane == 0) s.isel[j] = be, s.wsel[j] = s.probs[be];
    }
    // The weights' normalisation (their double sum in slot order, by lane 0) and scale:
    // each weight divided, then scaled, by its own lane.
    __syncwarp();
    float d = 1.0f;
    if (norm) {
        if (lane == 0) {
            double sum = 0;
            for (int j = 0; j < k; j++) sum += (double)s.wsel[j];
            d = fmaxf((float)sum, 6.103515625e-5f);
        }
        d = __shfl_sync(0xffffffffu, d, 0);
    }
    if (norm || scale != 0.0f)
        for (int j = lane; j < k; j += 32) {
            float x = s.wsel[j];
            if (norm) x /= d;
            if (scale != 0.0f) x *= scale;
            s.wsel[j] = x;
        }
    __syncwarp();
}

// moe_bias loads a lane's PL selection biases (0 without bias).
template <int PL>
__device__ __forceinline__ void moe_bias(float* bv, const float* bias, int X) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int u = 0; u < PL; u++) bv[u] = bias && lane + 32 * u < X ? bias[lane + 32 * u] : 0.0f;
}

// moe_route_row is moe_route of token t's row after the kernel's wait, the biases loaded
// before it; with ids and w not null lanes write the pairs t*k + j.
template <int PL>
__device__ __forceinline__ void moe_route_row(MoeSmem& s, int* ids, float* w, const float* logits, const float* bias, int t, int X,
                                              int k, int ngroup, int ngroup_used, int sigmoid, int norm, float scale) {
    float bv[PL];
    moe_bias<PL>(bv, bias, X);
    pdl_wait();
    moe_route<PL>(s, logits + (i64)t * X, bv, bias != nullptr, X, k, ngroup, ngroup_used, sigmoid, norm, scale);
    if (ids)
        for (int j = threadIdx.x & 31; j < k; j += 32) ids[(i64)t * k + j] = s.isel[j], w[(i64)t * k + j] = s.wsel[j];
}

extern "C" __global__ void __launch_bounds__(32) moe_topk(int* ids, float* w, const float* logits, const float* bias, int X,
                                                          int k, int ngroup, int ngroup_used, int sigmoid, int norm, float scale) { pdl_defer();
    __shared__ MoeSmem s;
    if (X <= 64) moe_route_row<2>(s, ids, w, logits, bias, blockIdx.x, X, k, ngroup, ngroup_used, sigmoid, norm, scale);
    else moe_route_row<MOE_MAX_EXPERTS / 32>(s, ids, w, logits, bias, blockIdx.x, X, k, ngroup, ngroup_used, sigmoid, norm, scale);
}

// moe_guess is moe_route's selection guessed from the logits alone, for mmv_route to load
// the experts' first weights while moe_route runs: softmax's probabilities do not
// decrease where the logits increase, so the k largest logits (ties to the lower index)
// are moe_route's k experts in its order, except where two experts' probabilities round
// to the same float while their logits differ (moe_route then takes the lower index
// first; mmv_route compares and loads again). Softmax without biases or group limits
// only (the caller's test); X <= 64, two experts a lane; NaN logits rank lowest, and the
// guesses are always k distinct experts below X, so the loads stay in bounds. Each round
// is one redux.sync over an order-preserving key and two ballots.
__device__ __forceinline__ void moe_guess(MoeSmem& s, const float* row, int X, int k) {
    const int lane = threadIdx.x & 31;
    uint32_t key[2];
#pragma unroll
    for (int u = 0; u < 2; u++) {
        const int e = lane + 32 * u;
        const float x = e < X ? row[e] : 0.0f;
        const uint32_t b = x == 0.0f ? 0u : __float_as_uint(x);  // -0 as +0, equal as floats
        // order-preserving: negative floats reversed below the positive ones; NaN 1,
        // above only the absent experts' and taken ones' 0 (-inf's key is 0x7fffff).
        key[u] = e >= X ? 0u : x != x ? 1u : (b & 0x80000000u) ? ~b : b | 0x80000000u;
    }
    unsigned g0 = 0, g1 = 0;
    for (int j = 0; j < k; j++) {
        const uint32_t m = __reduce_max_sync(0xffffffffu, max(key[0], key[1]));
        const uint32_t b0 = __ballot_sync(0xffffffffu, key[0] == m), b1 = __ballot_sync(0xffffffffu, key[1] == m);
        const int e = b0 ? __ffs(b0) - 1 : 32 + __ffs(b1) - 1;
        if (e == lane) key[0] = 0u;
        if (e == lane + 32) key[1] = 0u;
        if (e < 32) g0 |= 1u << e;
        else g1 |= 1u << (e - 32);
        if (lane == 0) s.guess[j] = e;
    }
    if (lane == 0) s.gmask[0] = g0, s.gmask[1] = g1;
}

// mmv_route_q4_k: moe_topk of one token and the gate and up products of its k experts
// (mmv_id_q4_k with gridDim.y = 2 and xdiv = k) in one launch, so that no launch
// boundary separates the routing from the products (session 42). Q4_K experts of at
// most 2,048 columns (one of mv1's steps: lane 4 ib + c takes chunk c of block ib of a
// row, so its activation values are loaded once, from Xq, the token's Q8_K row).
// mmv_route_q5_k is the same for Q5_K experts (a Q5_K_M file's: mv1_q5_k's lanes, each
// block's 32 bytes of high bits loaded beside its header and quants, Q5K_R1 rows a task).
// One warp of every block routes (moe_route: warp 1 with the guess below, else warp 0;
// block 0 writes ids and w for the down product and the weighted sum). The blocks are
// resident at once (at most three an SM: the launch's grid): warp v of V takes tasks v,
// v + V, ... of R rows (Q4K_R1 or Q5K_R1) of one (matrix, pair), gate's tasks then up's,
// pair by pair, and loads the next task's weights before it reduces the current one.
// Each row's sum is mv1's (the same lanes, q4k_dot or q5k_dot and q4k_part, warp_sum):
// the same bits as moe_topk + mmv_id_q4_k (mmv_id_q5_k).
// On unless EMBER_CUDA_ROUTE_FUSE is 0 (fuse.go): it lost to the two launches in session
// 42 with plain weight loads, and gains ~2.5% on the H200 with evict-first ones (session
// 45); two or three rows a task (ROUTE_R) or two tasks ahead (session 45's ROUTE_D)
// lose, in both. Every warp's activation values are loaded while the routing runs.
// W and W2 are the experts' gate and up matrices (estride bytes an expert, rows ws
// apart), D and D2 [k, M] (rows dstride floats apart). The weights load as mmv_id_*'s
// do (ldw16, evict-first by EMBER_WEVICT's rule for per-expert products).
#ifndef ROUTE_R
#define ROUTE_R Q4K_R1
#endif
#define MMV_ROUTE_ARGS                                                                                                                  \
    int *ids, float *w, const float *logits, const float *bias, int X, int k, int ngroup, int ngroup_used, int sigmoid, int norm,    \
        float scale, const uint8_t *W, const uint8_t *W2, i64 ws, i64 estride, const uint8_t *Xq, float *D, float *D2, i64 dstride, \
        int M, int K, int spec
// S64: X <= 64 (the caller's), moe_route<2> only. SM (with S64): softmax routing, no
// selection biases, no group limits, k <= 32 and spec on (the caller's), so that the
// code of the others and of the unguessed start is left out.
template <int T, bool S64 = false, bool SM = false>
__device__ __forceinline__ void mmv_route(MMV_ROUTE_ARGS) {
    if constexpr (SM) sigmoid = 0, bias = nullptr, ngroup = 1;
    __shared__ MoeSmem s;
    constexpr bool Q5 = T == T_Q5_K;
    constexpr int R = Q5 ? Q5K_R1 : ROUTE_R, BB = Q5 ? 176 : 144, QO = Q5 ? 48 : 16;  // block bytes, quants' offset
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, c = lane & 3, ib = lane >> 2, nb = K / 256;
    const bool small = S64 || X <= 64;
    // With spec (softmax, no biases or group limits, X <= 64), warp 0 first guesses the
    // experts from the logits (moe_guess) while warp 1 routes (moe_route), and warps 0, 2
    // and 3 load their first two tasks' weights by the guess (warp 1 loads none: its
    // registers are the routing's; +2-5% tok/s on V2-Lite on H100s in session 75, where
    // every warp loading its first task lost 0.7%). The routing takes the guess where it
    // checks out (moe_route's guessed), so it waits for warp 0 there (barrier 2) and the
    // loading warps for the guess (barrier 1); where it chose otherwise, the weights are
    // loaded again. Else warp 0 routes and the loads wait for it. The guess beside the
    // routing rather than before it: +0.8% over the same checks after it (s76-call3).
    const bool guess = SM || spec && small && k <= MOE_MAX_EXPERTS / 8 && !sigmoid && bias == nullptr && (ngroup <= 1 || ngroup_used >= ngroup);
    const int rw = guess ? 1 : 0;  // the routing warp
    float bv[MOE_MAX_EXPERTS / 32];
    if (warp == rw) {
        if (small) moe_bias<2>(bv, bias, X);
        else if constexpr (!S64) moe_bias<MOE_MAX_EXPERTS / 32>(bv, bias, X);
    }
    pdl_wait();
    int xs[16];
    float yd = 0;
    int4 bs = make_int4(0, 0, 0, 0);
    if (ib < nb) q4k_x(Xq, K, ib, c, false, xs, &yd, &bs);  // in flight while the routing runs
    const int G = (M + R - 1) / R, TP = k * G, T2 = 2 * TP, V = 4 * gridDim.x;
    // task t: matrix t / TP, pair (t % TP) / G, rows R ((t % TP) % G) .. of expert sel[pair]
    auto load = [&](const int* sel, int t, uint4* h, uint4* qa, uint4* qb, uint4* ha, uint4* hb) {
        if (t >= T2) return;
        const int m = t >= TP, r = t - m * TP, r0 = (r % G) * R;
        const uint8_t* base = (m ? W2 : W) + (i64)sel[r / G] * estride + BB * ib;
        if (ib < nb) {
#pragma unroll
            for (int i = 0; i < R; i++) {
                const uint8_t* p = base + (i64)min(r0 + i, M - 1) * ws;
                h[i] = ldw16<wev(true)>(p), qa[i] = ldw16<wev(true)>(p + QO + 32 * c), qb[i] = ldw16<wev(true)>(p + QO + 16 + 32 * c);
                if constexpr (Q5) ha[i] = ldw16<wev(true)>(p + 16), hb[i] = ldw16<wev(true)>(p + 32);
            }
        }
    };
    int t = 4 * blockIdx.x + warp;
    uint4 h[R], qa[R], qb[R], ha[R], hb[R], nh[R], na[R], nq[R], nha[R], nhb[R];
    bool pre = false;  // the warp's first two tasks are loaded by the guess
    if (guess) {
        if (warp == 0) {
            moe_guess(s, logits, X, k);
            asm volatile("bar.arrive 1, 96;" ::: "memory");  // s.guess for warps 2 and 3
            asm volatile("bar.arrive 2, 64;" ::: "memory");  // and for warp 1's check
        } else if (warp != rw) {
            asm volatile("bar.sync 1, 96;" ::: "memory");
        }
        pre = warp != rw;
    }
    if (warp == rw) {
        if (small) moe_route<2>(s, logits, bv, bias != nullptr, X, k, ngroup, ngroup_used, sigmoid, norm, scale, guess);
        else if constexpr (!S64) moe_route<MOE_MAX_EXPERTS / 32>(s, logits, bv, bias != nullptr, X, k, ngroup, ngroup_used, sigmoid, norm, scale);
        if (blockIdx.x == 0)
            for (int j = lane; j < k; j += 32) ids[j] = s.isel[j], w[j] = s.wsel[j];
        if (guess) {  // k <= 32 with the guess
            const bool same = __all_sync(0xffffffffu, lane >= k || s.isel[lane] == s.guess[lane]);
            if (lane == 0) s.same = same;
        }
    } else if (pre) {
        load(s.guess, t, h, qa, qb, ha, hb);
        load(s.guess, t + V, nh, na, nq, nha, nhb);
    }
    __syncthreads();  // s.isel, s.same
    if (!guess || !s.same) pre = false;
    if (!pre) load(s.isel, t, h, qa, qb, ha, hb);
    for (; t < T2; t += V) {
        if (!pre) load(s.isel, t + V, nh, na, nq, nha, nhb);
        pre = false;
        float acc[R];
#pragma unroll
        for (int i = 0; i < R; i++) acc[i] = 0;
        if (ib < nb) {
#pragma unroll
            for (int i = 0; i < R; i++) {
                int sb;
                const int sa = Q5 ? q5k_dot(qa[i], qb[i], ha[i], hb[i], c, xs, &sb) : q4k_dot(qa[i], qb[i], xs, &sb);
                acc[i] += q4k_part(h[i], c, sa, sb, yd, bs);
            }
        }
        const int m = t >= TP, r = t - m * TP;
        mv1_store<R>(acc, (m ? D2 : D) + (i64)(r / G) * dstride, (r % G) * R, M);
#pragma unroll
        for (int i = 0; i < R; i++) {
            h[i] = nh[i], qa[i] = na[i], qb[i] = nq[i];
            if constexpr (Q5) ha[i] = nha[i], hb[i] = nhb[i];
        }
    }
}
extern "C" __global__ void __launch_bounds__(128, 3) mmv_route_q4_k(MMV_ROUTE_ARGS) { pdl_defer();
    mmv_route<T_Q4_K>(ids, w, logits, bias, X, k, ngroup, ngroup_used, sigmoid, norm, scale, W, W2, ws, estride, Xq, D, D2, dstride, M, K, spec);
}
// mmv_route_q4_k_64 is mmv_route_q4_k for at most 64 experts (DeepSeek-V2-Lite's; the
// host's choice, routeKernel) with only moe_route<2>'s code (~4,000 SASS instructions
// against ~6,500 with moe_route<8> beside it): V2-Lite's decode +1.3-1.4% (session 96,
// where smaller kernels elsewhere gained nothing: not code size alone).
extern "C" __global__ void __launch_bounds__(128, 3) mmv_route_q4_k_64(MMV_ROUTE_ARGS) { pdl_defer();
    mmv_route<T_Q4_K, true>(ids, w, logits, bias, X, k, ngroup, ngroup_used, sigmoid, norm, scale, W, W2, ws, estride, Xq, D, D2, dstride, M, K, spec);
}
// mmv_route_q4_k_64s is mmv_route_q4_k_64 for softmax routing without selection biases
// or group limits (DeepSeek-V2-Lite's; the host's choice): their code left out too.
extern "C" __global__ void __launch_bounds__(128, 3) mmv_route_q4_k_64s(MMV_ROUTE_ARGS) { pdl_defer();
    mmv_route<T_Q4_K, true, true>(ids, w, logits, bias, X, k, ngroup, ngroup_used, sigmoid, norm, scale, W, W2, ws, estride, Xq, D, D2, dstride, M, K, spec);
}
extern "C" __global__ void __launch_bounds__(128, 3) mmv_route_q5_k(MMV_ROUTE_ARGS) { pdl_defer();
    mmv_route<T_Q5_K>(ids, w, logits, bias, X, k, ngroup, ngroup_used, sigmoid, norm, scale, W, W2, ws, estride, Xq, D, D2, dstride, M, K, spec);
}
// mmv_route_q5_k_64s is mmv_route_q5_k for plain routing of at most 64 experts (a V2-Lite
// Q5_K_M file's; the host's choice, as mmv_route_q4_k_64s).
extern "C" __global__ void __launch_bounds__(128, 3) mmv_route_q5_k_64s(MMV_ROUTE_ARGS) { pdl_defer();
    mmv_route<T_Q5_K, true, true>(ids, w, logits, bias, X, k, ngroup, ngroup_used, sigmoid, norm, scale, W, W2, ws, estride, Xq, D, D2, dstride, M, K, spec);
}

// MOE_SUM_REGS is the most slots moe_slot_sum reads into registers before it sums: all
// of a thread's loads then issue together, one round trip to L2, where the loop's
// multiply-then-add waited on each load in turn (a V2-Lite layer's six slots were six
// round trips: moe_sum_add 4.9 us alone, 70% of its stalls long scoreboard; session 97).
#define MOE_SUM_REGS 8

// moe_slot_sum is the sum over slots j < k of dr[j * E] * wr[j], each product rounded,
// added in slot order; k >= 1.
__device__ __forceinline__ float moe_slot_sum(const float* dr, const float* wr, int k, int E) {
    if (k <= MOE_SUM_REGS) {
        float dv[MOE_SUM_REGS], wv[MOE_SUM_REGS];
#pragma unroll
        for (int j = 0; j < MOE_SUM_REGS; j++)
            if (j < k) dv[j] = dr[(i64)j * E], wv[j] = wr[j];
        float s = dv[0] * wv[0];
#pragma unroll
        for (int j = 1; j < MOE_SUM_REGS; j++)
            if (j < k) s = s + dv[j] * wv[j];
        return s;
    }
    float s = dr[0] * wr[0];
    for (int j = 1; j < k; j++) s = s + dr[(i64)j * E] * wr[j];
    return s;
}

// moe_sum: dst[t, c] = sum over slots j of d[t*k + j, c] * w[t*k + j], each product
// rounded, added in slot order (as the host path's Mul, GetRows and Adds). d [n*k, E],
// dst [n, E]; dst may alias neither d nor w.
extern "C" __global__ void moe_sum(float* dst, const float* d, const float* w, int k, int E, int n) { pdl_entry();
    for (i64 idx = (i64)blockIdx.x * blockDim.x + threadIdx.x; idx < (i64)n * E; idx += (i64)gridDim.x * blockDim.x) {
        const i64 t = idx / E, c = idx % E;
        dst[idx] = moe_slot_sum(d + t * k * E + c, w + t * k, k, E);
    }
}

// moe_sum_add: moe_sum, and the sum plus b into a second output (the shared experts'
// output added: what add_f32 of moe_sum's dst and b gives). sum may alias b, not d or w.
// b is read with d and w, before dst is written (one round trip, not two); where b is
// dst itself, the sum it would have read back is used.
extern "C" __global__ void moe_sum_add(float* dst, const float* d, const float* w, int k, int E, int n, float* sum,
                                       const float* b) { pdl_entry();
    for (i64 idx = (i64)blockIdx.x * blockDim.x + threadIdx.x; idx < (i64)n * E; idx += (i64)gridDim.x * blockDim.x) {
        const i64 t = idx / E, c = idx % E;
        const float bv = b[idx];
        const float s = moe_slot_sum(d + t * k * E + c, w + t * k, k, E);
        dst[idx] = s;
        sum[idx] = s + (b == dst ? s : bv);
    }
}

// moe_group groups the P (token, slot) pairs of a mixture of experts by expert for
// mmq_id: map lists the pairs expert by expert, each expert's in pair order; tiles holds
// the runs of at most tn of them as (expert, first index in map, count, 0) in expert
// order, and ntiles[0] their number (at most P/tn + X). One block of 1024 threads;
// X <= MOE_GROUP_MAX experts. The pairs' experts are read into shared memory first when
// they fit (MOE_GROUP_IDS), so that each warp's passes over them are not a global round
// trip per 32 pairs and expert (~25 us for 64 tokens' 384 pairs).
#define MOE_GROUP_MAX 1024
#define MOE_GROUP_IDS 8192
extern "C" __global__ void __launch_bounds__(1024)
moe_group(int* map, int4* tiles, int* ntiles, const int* gids, int P, int X, int tn) {
    pdl_entry();
    __shared__ int cnt[MOE_GROUP_MAX], off[MOE_GROUP_MAX], sid[MOE_GROUP_IDS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    const int* ids = gids;
    if (P <= MOE_GROUP_IDS) {
#pragma unroll 8
        for (int p = threadIdx.x; p < P; p += blockDim.x) sid[p] = gids[p];
        __syncthreads();
        ids = sid;
    }
    for (int e = warp; e < X; e += nw) {
        int c = 0;
        for (int p0 = 0; p0 < P; p0 += 32) {
            const int p = p0 + lane;
            c += __popc(__ballot_sync(0xffffffffu, p < P && ids[p] == e));
        }
        if (lane == 0) cnt[e] = c;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        int o = 0, t = 0;
        for (int e = 0; e < X; e++) {
            off[e] = o;
            for (int s = 0; s < cnt[e]; s += tn) tiles[t++] = make_int4(e, o + s, min(tn, cnt[e] - s), 0);
            o += cnt[e];
        }
        ntiles[0] = t;
    }
    __syncthreads();
    for (int e = warp; e < X; e += nw) {
        int o = off[e];
        for (int p0 = 0; p0 < P; p0 += 32) {
            const int p = p0 + lane;
            const bool hit = p < P && ids[p] == e;
            const unsigned m = __ballot_sync(0xffffffffu, hit);
            if (hit) map[o + __popc(m & ((1u << lane) - 1))] = p;
            o += __popc(m);
        }
    }
}
