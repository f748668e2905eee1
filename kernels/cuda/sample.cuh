// sample.cuh: what sample.cu (argmax, top-k, draws from the top k) and sample_row.cu
// (whole-row and nucleus draws, penalties) share: Greedy's argmax over a row, the top-k
// radix select, sample.expNeg, and a draw's size on the device.
#pragma once
#include "common.cuh"

#define DRAW_WORDS 8  // a draw (feed.go's drawWords): K, the doubles Temp, TopP, MinP, U, then the penalties

#define ARGMAX_THREADS 1024

// argmax_better reports whether candidate (v, i) beats (bv, bi) under sample.Greedy's
// rule: an index < 0 is no candidate (NaNs never become one), the larger value wins
// (-0 equals +0), and the lower index wins a tie. It is a total order on candidates, so
// a reduction in any shape finds the same winner as Greedy's scan.
__device__ __forceinline__ bool argmax_better(float v, int i, float bv, int bi) {
    if (i < 0) return false;
    if (bi < 0) return true;
    return v > bv || (v == bv && i < bi);
}

// argmax_scan is one step of Greedy's scan: v at index j (increasing) replaces the best
// so far when it is not NaN and larger, or the first candidate.
__device__ __forceinline__ void argmax_scan(float v, int j, float& bv, int& bi) {
    if (v == v && (bi < 0 || v > bv)) {
        bv = v;
        bi = j;
    }
}

// argmax_warp leaves every lane of a warp the best of the warp's (bv, bi) pairs under
// argmax_better, by shuffles.
__device__ __forceinline__ void argmax_warp(float& bv, int& bi) {
    for (int o = 16; o > 0; o >>= 1) {
        float ov = __shfl_xor_sync(0xffffffffu, bv, o);
        int oi = __shfl_xor_sync(0xffffffffu, bi, o);
        if (argmax_better(ov, oi, bv, bi)) {
            bv = ov;
            bi = oi;
        }
    }
}

// argmax_reduce_pair is the block's reduction of its threads' (bv, bi) pairs: warps by
// shuffles, then the warps' winners (wv and wi: a float and an int a warp of shared
// memory) in warp 0, whose lanes all get the block's winner in bv and bi (bi < 0 when no
// thread had one); it reports whether the thread is in warp 0. Every thread of the
// block calls it (one barrier).
__device__ __forceinline__ bool argmax_reduce_pair(float& bv, int& bi, float* wv, int* wi) {
    argmax_warp(bv, bi);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
    if (lane == 0) wv[warp] = bv, wi[warp] = bi;
    __syncthreads();
    if (warp != 0) return false;
    bv = lane < nw ? wv[lane] : 0.0f;
    bi = lane < nw ? wi[lane] : -1;
    argmax_warp(bv, bi);
    return true;
}

// argmax_reduce is argmax_reduce_pair's index: thread 0 gets the block's winner (0 when
// no thread had one).
__device__ __forceinline__ int argmax_reduce(float bv, int bi, float* wv, int* wi) {
    if (!argmax_reduce_pair(bv, bi, wv, wi)) return 0;
    return bi < 0 ? 0 : bi;
}

// argmax_block: the index of the largest element of row (cols floats), exactly as
// sample.Greedy: NaNs ignored, the lowest index on ties, 0 for a row of NaNs; every
// thread of the block calls it, thread 0 gets the answer. Each thread scans its strided
// share of the row in increasing order keeping the first of its largest, then the block
// reduces the (value, index) pairs, warps by shuffles and then the warps' winners in
// warp 0 (wv and wi: a float and an int a warp of shared memory).
__device__ __forceinline__ int argmax_block(const float* row, int cols, float* wv, int* wi) {
    float bv = 0.0f;
    int bi = -1;
    int j = threadIdx.x, bd = blockDim.x;
    for (; j + 3 * bd < cols; j += 4 * bd) {  // four loads in flight, then the compares
        float v0 = row[j], v1 = row[j + bd], v2 = row[j + 2 * bd], v3 = row[j + 3 * bd];
        argmax_scan(v0, j, bv, bi);
        argmax_scan(v1, j + bd, bv, bi);
        argmax_scan(v2, j + 2 * bd, bv, bi);
        argmax_scan(v3, j + 3 * bd, bv, bi);
    }
    for (; j < cols; j += bd) argmax_scan(row[j], j, bv, bi);
    return argmax_reduce(bv, bi, wv, wi);
}

// Top-k: the k first elements of a row under sample's candidate order (larger value
// first, lower index on ties; NaN and -Inf never candidates; +0 equals -0).

#define TOPK_THREADS 1024
#define TOPK_MAX 256  // backend.MaxTopK
#define TOPK_UNROLL 4
#define TOPK_ALL 0xffffffffu  // topk_block's bkey for the whole row

// topk_key maps a float to a uint32 whose unsigned order is the float order, -0 first
// mapped to +0, and 0 for the elements that are no candidates (NaN, -Inf): every valid
// key is at least 0x00800000 (-FLT_MAX's), as key 0 would be a NaN's, and at most +Inf's
// 0xff800000, below TOPK_ALL.
__device__ __forceinline__ unsigned topk_key(float v) {
    if (v != v || v == -INFINITY) return 0u;
    unsigned u = __float_as_uint(v == 0.0f ? 0.0f : v);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// topk_after reports whether an element of key key at column j is a candidate after
// (bkey, bcol) in the candidate order: valid, and a smaller key or the same at a later
// column. (TOPK_ALL, -1) takes every valid element.
__device__ __forceinline__ bool topk_after(unsigned key, int j, unsigned bkey, int bcol) {
    return key != 0u && (key < bkey || (key == bkey && j > bcol));
}

// topk_smem is topk_block's shared memory for up to K candidates.
template <int K>
struct topk_smem {
    int hist[256];
    int wsum[TOPK_THREADS / 32];
    unsigned ckey[K];
    int cidx[K];
    unsigned prefix, mask;
    int need, ties, n;
};

// topk_block: the k first (k <= K) of row's cols elements that come after (bkey, bcol)
// in the candidate order (topk_after), into s.ckey and s.cidx (keys and columns, in no
// order: topk_rank gives each its place); it returns how many, min(k, such elements).
// Every thread of the block (TOPK_THREADS) calls it; it ends with a barrier.
//  1. Radix select on the keys, 8 bits a pass from the top: a shared histogram of the
//     digit among the candidates matching the digits fixed so far (prefix under mask),
//     whose suffix sums give the digit of the need-th largest; need becomes the rank
//     within that digit's bin. It stops when the bin is taken whole (need == ties), at
//     the latest after the 4th pass, when prefix is the k-th key itself. A row with at
//     most k candidates takes them all (mask 0).
//  2. Collect: keys above the prefix (under mask) are candidates, and so are the ties
//     (matching it): all of them when need == ties, else the need lowest-indexed, found
//     by a block scan of the tie counts over the row in index order.
template <int K>
__device__ int topk_block(const float* row, int cols, int k, unsigned bkey, int bcol, topk_smem<K>& s) {
    const int tid = threadIdx.x, bd = blockDim.x, lane = tid & 31, warp = tid >> 5, nw = bd >> 5;
    __syncthreads();  // s may hold a round before's candidates, still being read
    if (tid == 0) {
        s.prefix = 0u;
        s.mask = 0u;
        s.need = k;
        s.ties = -1;
        s.n = 0;
    }
    for (int shift = 24; shift >= 0; shift -= 8) {
        if (tid < 256) s.hist[tid] = 0;
        __syncthreads();
        const unsigned prefix = s.prefix, mask = s.mask;
        const int need = s.need;
        for (int base = 0; base < cols; base += TOPK_UNROLL * bd) {  // uniform per warp
            float v[TOPK_UNROLL];
#pragma unroll
            for (int u = 0; u < TOPK_UNROLL; u++) {
                int j = base + u * bd + tid;
                v[u] = j < cols ? row[j] : __int_as_float(0x7fffffff);  // NaN: no key
            }
#pragma unroll
            for (int u = 0; u < TOPK_UNROLL; u++) {
                unsigned key = topk_key(v[u]);
                bool in = topk_after(key, base + u * bd + tid, bkey, bcol) && (key & mask) == prefix;
                int bin = in ? (int)((key >> shift) & 255u) : 256;
                unsigned same = __match_any_sync(0xffffffffu, bin);  // warp-aggregated add
                if (in && lane == __ffs(same) - 1) atomicAdd(&s.hist[bin], __popc(same));
            }
        }
        __syncthreads();
        // Suffix sums over the bins from 255 down: thread t < 256 holds bin 255 - t.
        int b = 255 - tid, c = 0, incl = 0;
        if (tid < 256) {
            c = s.hist[b];
            incl = c;
            for (int o = 1; o < 32; o <<= 1) {
                int y = __shfl_up_sync(0xffffffffu, incl, o);
                if (lane >= o) incl += y;
            }
            if (lane == 31) s.wsum[warp] = incl;
        }
        __syncthreads();
        if (tid < 256) {
            int total = 0;
            for (int w = 0; w < 256 / 32; w++) {
                if (w < warp) incl += s.wsum[w];
                total += s.wsum[w];
            }
            int excl = incl - c;
            if (shift == 24 && total <= need) {
                if (tid == 0) {  // at most k candidates: all of them (mask 0)
                    s.need = total;
                    s.ties = total;
                }
            } else if (excl < need && need <= incl) {  // exactly one thread
                s.prefix = prefix | ((unsigned)b << shift);
                s.mask = mask | (255u << shift);
                s.need = need - excl;
                s.ties = c;
            }
        }
        __syncthreads();
        if (s.need == s.ties) break;  // uniform: the whole bin is taken
    }
    __syncthreads();  // every thread has read s.need and s.ties
    const unsigned prefix = s.prefix, mask = s.mask;
    const int need = s.need;
    const bool allTies = need == s.ties;
    for (int base = 0; base < cols; base += bd) {  // uniform per warp
        const int j = base + tid;
        const unsigned key = j < cols ? topk_key(row[j]) : 0u;
        const unsigned m = key & mask;
        const bool in = topk_after(key, j, bkey, bcol) && (m > prefix || (allTies && m == prefix));
        const unsigned bal = __ballot_sync(0xffffffffu, in);  // one atomic a warp
        int slot = 0;
        if (lane == 0 && bal) slot = atomicAdd(&s.n, __popc(bal));
        slot = __shfl_sync(0xffffffffu, slot, 0) + __popc(bal & ((1u << lane) - 1u));
        if (in) {
            s.ckey[slot] = key;
            s.cidx[slot] = j;
        }
    }
    __syncthreads();
    if (!allTies) {
        // The need lowest-indexed ties (key == prefix, mask being full), in index order.
        const int above = s.n;
        int taken = 0;
        for (int base = 0; base < cols && taken < need; base += bd) {  // taken is uniform
            int j = base + tid;
            bool tie = j < cols && topk_key(row[j]) == prefix && topk_after(prefix, j, bkey, bcol);
            unsigned bal = __ballot_sync(0xffffffffu, tie);
            if (lane == 0) s.wsum[warp] = __popc(bal);
            __syncthreads();
            int before = taken, total = taken;
            for (int w = 0; w < nw; w++) {
                if (w < warp) before += s.wsum[w];
                total += s.wsum[w];
            }
            before += __popc(bal & ((1u << lane) - 1u));
            if (tie && before < need) {
                s.ckey[above + before] = prefix;
                s.cidx[above + before] = j;
            }
            taken = total;
            __syncthreads();  // wsum is rewritten next round
        }
        if (tid == 0) s.n = above + need;
        __syncthreads();
    }
    return s.n;
}

// topk_rank is candidate i's place among topk_block's n (the count of candidates before
// it in the candidate order).
template <int K>
__device__ __forceinline__ int topk_rank(const topk_smem<K>& s, int n, int i) {
    const unsigned key = s.ckey[i];
    const int idx = s.cidx[i];
    int rank = 0;
    for (int j = 0; j < n; j++) {
        unsigned kj = s.ckey[j];
        rank += kj > key || (kj == key && s.cidx[j] < idx);
    }
    return rank;
}

// exp_neg: sample.expNeg (inference/sample/exp.go), e^x for x <= 0 in the same
// operations on the same constants.
__device__ __forceinline__ double exp_neg(double x) {
    if (!(x >= -708.0)) return 0.0;
    x = fmin(x, 0.0);
    const double k = floor(__fma_rn(x, 0x1.71547652b82fep+00, 0.5));
    double r = __fma_rn(-k, 0x1.62e42feep-01, x);
    r = __fma_rn(-k, 0x1.a39ef35793c76p-33, r);
    double p = 0x1.6124613a86d09p-33;  // 1/13!, then Horner down to 1/0!
    p = __fma_rn(p, r, 0x1.1eed8eff8d898p-29);
    p = __fma_rn(p, r, 0x1.ae64567f544e4p-26);
    p = __fma_rn(p, r, 0x1.27e4fb7789f5cp-22);
    p = __fma_rn(p, r, 0x1.71de3a556c734p-19);
    p = __fma_rn(p, r, 0x1.a01a01a01a01ap-16);
    p = __fma_rn(p, r, 0x1.a01a01a01a01ap-13);
    p = __fma_rn(p, r, 0x1.6c16c16c16c17p-10);
    p = __fma_rn(p, r, 0x1.1111111111111p-07);
    p = __fma_rn(p, r, 0x1.5555555555555p-05);
    p = __fma_rn(p, r, 0x1.5555555555555p-03);
    p = __fma_rn(p, r, 0x1p-01);
    p = __fma_rn(p, r, 0x1p+00);
    p = __fma_rn(p, r, 0x1p+00);
    return __dmul_rn(p, __longlong_as_double((long long)(1023 + (int)k) << 52));
}
