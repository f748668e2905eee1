// route.cuh: a mixture of experts' routing of one token (moe.cu's moe_topk, and the
// router product with the routing fused, matmul.cu's mmv_f32_route).
#pragma once
#include "common.cuh"

#define MOE_MAX_EXPERTS 256

// moe_route is the routing of token t by one warp (the first of its block), as
// deepseek2's route (inference/model/deepseek2/moe.go) computes it, with the same float
// operations: from the token's router logits (row, read past L1: mmv_f32_route's blocks
// write them in the same kernel) probabilities by softmax (float exps of
// the max-shifted logits; their double sum taken in index order by one lane) or sigmoid;
// selection scores = probabilities + bias (optional); group limiting (the ngroup_used
// groups whose two best scores sum highest); the k best in descending order, ties to
// the lower index (a warp argmax per slot); their probabilities optionally normalised
// and scaled. ids (expert) and w (weight) [n, k], pair t*k + j.
__device__ __forceinline__ void moe_route(int* ids, float* w, const float* row, const float* bias, int X, int k,
                                          int ngroup, int ngroup_used, int sigmoid, int norm, float scale, int t) {
    __shared__ float probs[MOE_MAX_EXPERTS], score[MOE_MAX_EXPERTS], gsum[MOE_MAX_EXPERTS];
    __shared__ int keep[MOE_MAX_EXPERTS], taken[MOE_MAX_EXPERTS];
    __shared__ float inv_s;
    const int lane = threadIdx.x & 31;
    if (sigmoid) {
        for (int e = lane; e < X; e += 32) probs[e] = 1.0f / (1.0f + (float)exp(-(double)__ldcg(row + e)));
    } else {
        float mx = -INFINITY;
        for (int e = lane; e < X; e += 32) mx = fmaxf(mx, __ldcg(row + e));
        mx = warp_max(mx);
        for (int e = lane; e < X; e += 32) probs[e] = (float)exp((double)(__ldcg(row + e) - mx));
        __syncwarp();
        if (lane == 0) {
            double sum = 0;
            for (int e = 0; e < X; e++) sum += (double)probs[e];
            inv_s = (float)(1.0 / sum);
        }
        __syncwarp();
        const float inv = inv_s;
        for (int e = lane; e < X; e += 32) probs[e] *= inv;
    }
    for (int e = lane; e < X; e += 32) {
        score[e] = bias ? probs[e] + bias[e] : probs[e];
        taken[e] = 0;
    }
    __syncwarp();
    if (ngroup > 1 && ngroup_used < ngroup) {
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
        for (int e = lane; e < X; e += 32)
            if (!keep[e / per]) score[e] = -INFINITY;
        __syncwarp();
    }
    int* sel = ids + (i64)t * k;
    float* ws = w + (i64)t * k;
    for (int j = 0; j < k; j++) {
        int be = -1;
        float bs = 0;
        for (int e = lane; e < X; e += 32)
            if (!taken[e] && (be < 0 || score[e] > bs)) {
                be = e;
                bs = score[e];
            }
        for (int o = 16; o > 0; o >>= 1) {
            const int oe = __shfl_xor_sync(0xffffffffu, be, o);
            const float os = __shfl_xor_sync(0xffffffffu, bs, o);
            if (oe >= 0 && (be < 0 || os > bs || (os == bs && oe < be))) {
                be = oe;
                bs = os;
            }
        }
        if (lane == 0) {
            sel[j] = be;
            ws[j] = probs[be];
            taken[be] = 1;
        }
        __syncwarp();
    }
    if (lane != 0) return;
    if (norm) {
        double s = 0;
        for (int j = 0; j < k; j++) s += (double)ws[j];
        const float d = fmaxf((float)s, 6.103515625e-5f);
        for (int j = 0; j < k; j++) ws[j] /= d;
    }
    if (scale != 0.0f)
        for (int j = 0; j < k; j++) ws[j] *= scale;
}
