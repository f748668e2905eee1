// moe.cu: a mixture of experts on the device (inference/backend/cuda/moe.go): routing
// (moe_topk), the grouping of the (token, slot) pairs by expert for the tensor-core
// products (moe_group, whose tiles mmq.cu's mmq_id_* take), and the weighted sum of the
// experts' outputs (moe_sum).
#include "common.cuh"

// ---- mixture of experts on the device (inference/backend/cuda/moe.go) ----

#define MOE_MAX_EXPERTS 256

// moe_topk: the routing of deepseek2's route (inference/model/deepseek2/moe.go), with
// the same float operations: per token (a warp) probabilities by softmax (float exps of
// the max-shifted logits; their double sum taken in index order by one lane) or sigmoid;
// selection scores = probabilities + bias (optional); group limiting (the ngroup_used
// groups whose two best scores sum highest); the k best in descending order, ties to
// the lower index (a warp argmax per slot); their probabilities optionally normalised
// and scaled. logits [n, X]; ids (expert) and w (weight) [n, k], pair t*k + j.
// Lane l holds experts l + 32u (u < MOE_PER_LANE) in registers: the logits are loaded at
// once, the bias (a weight) before the wait, and the selected weights are normalised and
// scaled in shared memory and written once (session 35: the read-backs of w from global
// memory between its stores were round trips on the routing's critical path).
#define MOE_PER_LANE (MOE_MAX_EXPERTS / 32)
extern "C" __global__ void __launch_bounds__(32) moe_topk(int* ids, float* w, const float* logits, const float* bias, int X,
                                                          int k, int ngroup, int ngroup_used, int sigmoid, int norm, float scale) { pdl_defer();
    __shared__ float probs[MOE_MAX_EXPERTS], score[MOE_MAX_EXPERTS], gsum[MOE_MAX_EXPERTS], wsel[MOE_MAX_EXPERTS];
    __shared__ int keep[MOE_MAX_EXPERTS], isel[MOE_MAX_EXPERTS];
    __shared__ float inv_s;
    const int t = blockIdx.x, lane = threadIdx.x;
    float bv[MOE_PER_LANE], v[MOE_PER_LANE], sc[MOE_PER_LANE];
    bool taken[MOE_PER_LANE];
#pragma unroll
    for (int u = 0; u < MOE_PER_LANE; u++) bv[u] = bias && lane + 32 * u < X ? bias[lane + 32 * u] : 0.0f;
    pdl_wait();
    const float* row = logits + (i64)t * X;
#pragma unroll
    for (int u = 0; u < MOE_PER_LANE; u++) v[u] = lane + 32 * u < X ? row[lane + 32 * u] : 0.0f;
    if (sigmoid) {
#pragma unroll
        for (int u = 0; u < MOE_PER_LANE; u++) v[u] = 1.0f / (1.0f + (float)exp(-(double)v[u]));
    } else {
        float mx = -INFINITY;
#pragma unroll
        for (int u = 0; u < MOE_PER_LANE; u++)
            if (lane + 32 * u < X) mx = fmaxf(mx, v[u]);
        mx = warp_max(mx);
#pragma unroll
        for (int u = 0; u < MOE_PER_LANE; u++) {
            v[u] = (float)exp((double)(v[u] - mx));
            if (lane + 32 * u < X) probs[lane + 32 * u] = v[u];
        }
        __syncwarp();
        if (lane == 0) {
            double sum = 0;
            for (int e = 0; e < X; e++) sum += (double)probs[e];
            inv_s = (float)(1.0 / sum);
        }
        __syncwarp();
        const float inv = inv_s;
#pragma unroll
        for (int u = 0; u < MOE_PER_LANE; u++) v[u] *= inv;
    }
#pragma unroll
    for (int u = 0; u < MOE_PER_LANE; u++) {
        const int e = lane + 32 * u;
        sc[u] = bias ? v[u] + bv[u] : v[u];
        taken[u] = e >= X;
        if (e < X) probs[e] = v[u];
    }
    if (ngroup > 1 && ngroup_used < ngroup) {
#pragma unroll
        for (int u = 0; u < MOE_PER_LANE; u++)
            if (lane + 32 * u < X) score[lane + 32 * u] = sc[u];
        __syncwarp();
        const int per = X / ngroup;
        for (int g = lane; g < ngroup; g += 32) {
            float a = -INFINITY, b = -INFINITY;
            for (int e = g * per; e < (g + 1) * per; e++) {
                const float x = score[e];
                if (x > a) {
                    b = a;
                    a = x;
                } else if (x > b) {
                    b = x;
                }
            }
            gsum[g] = a + b;
            keep[g] = 0;
        }
        __syncwarp();
        if (lane == 0)
            for (int u = 0; u < ngroup_used; u++) {
                int best = -1;
                for (int g = 0; g < ngroup; g++)
                    if (!keep[g] && (best < 0 || gsum[g] > gsum[best])) best = g;
                keep[best] = 1;
            }
        __syncwarp();
#pragma unroll
        for (int u = 0; u < MOE_PER_LANE; u++)
            if (lane + 32 * u < X && !keep[(lane + 32 * u) / per]) sc[u] = -INFINITY;
    }
    __syncwarp();  // probs complete for lane 0's reads below
    for (int j = 0; j < k; j++) {
        int be = -1;
        float bs = 0;
#pragma unroll
        for (int u = 0; u < MOE_PER_LANE; u++)
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
        for (int u = 0; u < MOE_PER_LANE; u++)
            if (be == lane + 32 * u) taken[u] = true;
        if (lane == 0) isel[j] = be, wsel[j] = probs[be];
    }
    if (lane == 0) {
        if (norm) {
            double s = 0;
            for (int j = 0; j < k; j++) s += (double)wsel[j];
            const float d = fmaxf((float)s, 6.103515625e-5f);
            for (int j = 0; j < k; j++) wsel[j] /= d;
        }
        if (scale != 0.0f)
            for (int j = 0; j < k; j++) wsel[j] *= scale;
    }
    __syncwarp();
    for (int j = lane; j < k; j += 32) ids[(i64)t * k + j] = isel[j], w[(i64)t * k + j] = wsel[j];
}

// moe_sum: dst[t, c] = sum over slots j of d[t*k + j, c] * w[t*k + j], each product
// rounded, added in slot order (as the host path's Mul, GetRows and Adds). d [n*k, E],
// dst [n, E]; dst may alias neither d nor w.
extern "C" __global__ void moe_sum(float* dst, const float* d, const float* w, int k, int E, int n) { pdl_entry();
    for (i64 idx = (i64)blockIdx.x * blockDim.x + threadIdx.x; idx < (i64)n * E; idx += (i64)gridDim.x * blockDim.x) {
        const i64 t = idx / E, c = idx % E;
        const float* dr = d + t * k * E + c;
        const float* wr = w + t * k;
        float s = dr[0] * wr[0];
        for (int j = 1; j < k; j++) s = s + dr[(i64)j * E] * wr[j];
        dst[idx] = s;
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
        const float* dr = d + t * k * E + c;
        const float* wr = w + t * k;
        const float bv = b[idx];
        float s = dr[0] * wr[0];
        for (int j = 1; j < k; j++) s = s + dr[(i64)j * E] * wr[j];
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
