// sample.cu: token sampling on the GPU. Greedy decoding needs one id per logits row, so
// the host reads back rows ids instead of rows x vocabulary floats.
#include "common.cuh"

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
    for (int o = 16; o > 0; o >>= 1) {
        float ov = __shfl_xor_sync(0xffffffffu, bv, o);
        int oi = __shfl_xor_sync(0xffffffffu, bi, o);
        if (argmax_better(ov, oi, bv, bi)) {
            bv = ov;
            bi = oi;
        }
    }
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
    if (lane == 0) {
        wv[warp] = bv;
        wi[warp] = bi;
    }
    __syncthreads();
    if (warp != 0) return 0;
    bv = lane < nw ? wv[lane] : 0.0f;
    bi = lane < nw ? wi[lane] : -1;
    for (int o = 16; o > 0; o >>= 1) {
        float ov = __shfl_xor_sync(0xffffffffu, bv, o);
        int oi = __shfl_xor_sync(0xffffffffu, bi, o);
        if (argmax_better(ov, oi, bv, bi)) {
            bv = ov;
            bi = oi;
        }
    }
    return bi < 0 ? 0 : bi;
}

// argmax_f32: dst[r] = the index of the largest element of row r of x (rows of cols
// floats, stride floats apart), exactly as sample.Greedy (argmax_block). One block of
// ARGMAX_THREADS threads per row (blockIdx.x).
extern "C" __global__ void __launch_bounds__(ARGMAX_THREADS) argmax_f32(int* dst, const float* x, i64 stride, int cols) { pdl_entry();
    __shared__ float wv[ARGMAX_THREADS / 32];
    __shared__ int wi[ARGMAX_THREADS / 32];
    int id = argmax_block(x + (i64)blockIdx.x * stride, cols, wv, wi);
    if (threadIdx.x == 0) dst[blockIdx.x] = id;
}

// Top-k: the k first elements of a row under sample's candidate order (larger value
// first, lower index on ties; NaN and -Inf never candidates; +0 equals -0), so the host
// reads back k (id, value) pairs per row instead of the row.

#define TOPK_THREADS 1024
#define TOPK_MAX 256  // backend.MaxTopK
#define TOPK_UNROLL 4

// topk_key maps a float to a uint32 whose unsigned order is the float order, -0 first
// mapped to +0, and 0 for the elements that are no candidates (NaN, -Inf): every valid
// key is at least 0x00800000 (-FLT_MAX's), as key 0 would be a NaN's.
__device__ __forceinline__ unsigned topk_key(float v) {
    if (v != v || v == -INFINITY) return 0u;
    unsigned u = __float_as_uint(v == 0.0f ? 0.0f : v);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// topk_f32: for row r (blockIdx.x) of x (rows of cols floats, stride floats apart), the
// part of the row a block takes (blockIdx.y: chunk floats from blockIdx.y * chunk, the
// last part what is left) gives the k first of its elements in the candidate order:
// ids[o*k + i] and vals[o*k + i], o = r * gridDim.y + blockIdx.y, are the (column,
// value) of the i-th, for i < min(k, valid elements), then -1 and -Inf; 1 <= k <=
// TOPK_MAX. With xids not null the ids written are xids' entries at those columns (rows
// of xids as of x): a second pass over the first pass's candidates of every part (their
// values as a row, parts in column order, each part's sorted, so a lower slot holds the
// lower column among equal values) names the row's own columns. One block of
// TOPK_THREADS threads per part:
//  1. Radix select on the keys, 8 bits a pass from the top: a shared histogram of the
//     digit among the valid elements matching the digits fixed so far (prefix under
//     mask), whose suffix sums give the digit of the need-th largest; need becomes the
//     rank within that digit's bin. It stops when the bin is taken whole (need == ties),
//     at the latest after the 4th pass, when prefix is the k-th key itself. A row with
//     at most k valid elements takes them all (mask 0).
//  2. Collect: keys above the prefix (under mask) are candidates, and so are the ties
//     (matching it): all of them when need == ties, else the need lowest-indexed, found
//     by a block scan of the tie counts over the row in index order.
//  3. Sort the candidates in shared memory by rank (count of candidates before each).
extern "C" __global__ void __launch_bounds__(TOPK_THREADS) topk_f32(int* ids, float* vals, const float* x, i64 stride, int cols, int k, int chunk, const int* xids) { pdl_entry();
    __shared__ int hist[256];
    __shared__ int wsum[TOPK_THREADS / 32];
    __shared__ unsigned ckey[TOPK_MAX];
    __shared__ int cidx[TOPK_MAX];
    __shared__ unsigned s_prefix, s_mask;
    __shared__ int s_need, s_ties, s_n;
    const int c0 = blockIdx.y * chunk;
    cols = min(chunk, cols - c0);  // this block's part
    const float* row = x + (i64)blockIdx.x * stride + c0;
    const int tid = threadIdx.x, bd = blockDim.x, lane = tid & 31, warp = tid >> 5, nw = bd >> 5;
    if (tid == 0) {
        s_prefix = 0u;
        s_mask = 0u;
        s_need = k;
        s_ties = -1;
        s_n = 0;
    }
    for (int shift = 24; shift >= 0; shift -= 8) {
        if (tid < 256) hist[tid] = 0;
        __syncthreads();
        const unsigned prefix = s_prefix, mask = s_mask;
        const int need = s_need;
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
                bool in = key != 0u && (key & mask) == prefix;
                int bin = in ? (int)((key >> shift) & 255u) : 256;
                unsigned same = __match_any_sync(0xffffffffu, bin);  // warp-aggregated add
                if (in && lane == __ffs(same) - 1) atomicAdd(&hist[bin], __popc(same));
            }
        }
        __syncthreads();
        // Suffix sums over the bins from 255 down: thread t < 256 holds bin 255 - t.
        int b = 255 - tid, c = 0, incl = 0;
        if (tid < 256) {
            c = hist[b];
            incl = c;
            for (int o = 1; o < 32; o <<= 1) {
                int y = __shfl_up_sync(0xffffffffu, incl, o);
                if (lane >= o) incl += y;
            }
            if (lane == 31) wsum[warp] = incl;
        }
        __syncthreads();
        if (tid < 256) {
            int total = 0;
            for (int w = 0; w < 256 / 32; w++) {
                if (w < warp) incl += wsum[w];
                total += wsum[w];
            }
            int excl = incl - c;
            if (shift == 24 && total <= need) {
                if (tid == 0) {  // at most k valid elements: all of them (mask 0)
                    s_need = total;
                    s_ties = total;
                }
            } else if (excl < need && need <= incl) {  // exactly one thread
                s_prefix = prefix | ((unsigned)b << shift);
                s_mask = mask | (255u << shift);
                s_need = need - excl;
                s_ties = c;
            }
        }
        __syncthreads();
        if (s_need == s_ties) break;  // uniform: the whole bin is taken
    }
    __syncthreads();  // every thread has read s_need and s_ties
    const unsigned prefix = s_prefix, mask = s_mask;
    const int need = s_need;
    const bool allTies = need == s_ties;
    for (int j = tid; j < cols; j += bd) {
        unsigned key = topk_key(row[j]);
        if (key == 0u) continue;
        unsigned m = key & mask;
        if (m > prefix || (allTies && m == prefix)) {
            int slot = atomicAdd(&s_n, 1);
            ckey[slot] = key;
            cidx[slot] = j;
        }
    }
    __syncthreads();
    if (!allTies) {
        // The need lowest-indexed ties (key == prefix, mask being full), in index order.
        const int above = s_n;
        int taken = 0;
        for (int base = 0; base < cols && taken < need; base += bd) {  // taken is uniform
            int j = base + tid;
            bool tie = j < cols && topk_key(row[j]) == prefix;
            unsigned bal = __ballot_sync(0xffffffffu, tie);
            if (lane == 0) wsum[warp] = __popc(bal);
            __syncthreads();
            int before = taken, total = taken;
            for (int w = 0; w < nw; w++) {
                if (w < warp) before += wsum[w];
                total += wsum[w];
            }
            before += __popc(bal & ((1u << lane) - 1u));
            if (tie && before < need) {
                ckey[above + before] = prefix;
                cidx[above + before] = j;
            }
            taken = total;
            __syncthreads();  // wsum is rewritten next round
        }
        if (tid == 0) s_n = above + need;
        __syncthreads();
    }
    const int n = s_n;
    const i64 o = (i64)blockIdx.x * gridDim.y + blockIdx.y;
    int* oid = ids + o * k;
    float* oval = vals + o * k;
    if (tid < n) {
        unsigned key = ckey[tid];
        int idx = cidx[tid], rank = 0;
        for (int i = 0; i < n; i++) {
            unsigned ki = ckey[i];
            rank += ki > key || (ki == key && cidx[i] < idx);
        }
        oid[rank] = xids ? xids[(i64)blockIdx.x * stride + c0 + idx] : c0 + idx;
        oval[rank] = row[idx];
    } else if (tid < k) {
        oid[tid] = -1;
        oval[tid] = -INFINITY;
    }
}

// Sampling from the top-k candidates on the device, so a sampled decode step can feed
// the next one without the host (backend.Feeder's SampleAhead). The draw is
// sample.Draw.Pick's, operation for operation in doubles rounded to nearest (no fused
// multiply-add but those written as such), so the device draws the token the host's
// sampler would from the same candidates and uniform.

#define DRAW_THREADS 256  // >= TOPK_MAX
#define DRAW_WORDS 8  // a draw (feed.go's drawWords): K, the doubles Temp, TopP, MinP, U, then the penalties

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

// Penalties (sample.Penalties, a draw's words 5-7): word 5 the repeat and presence
// penalties (floats, low and high half), word 6 the frequency penalty and flags (bit 0:
// penalties, bit 1: the row's fed id is one more seen token), word 7 the offset and
// count of the draw's seen tokens in the seen array.

#define PEN_THREADS 256
#define PEN_MAX 1024  // backend.MaxSeen

// sample_penalize_f32 applies row r's (blockIdx.x) draw's penalties to row r of x (rows
// of cols floats, stride floats apart), in place, as sample.Penalties.penalize on the
// host: once for each distinct seen token in the row (its seen tokens and, with flag 1,
// fed[r], the id the feed held for the row), by its count: the repeat penalty (a positive
// logit divided, another multiplied), then frequency count + presence subtracted, each
// operation rounded apart. The first of a token's occurrences applies them, so no two
// threads write one logit.
extern "C" __global__ void __launch_bounds__(PEN_THREADS) sample_penalize_f32(float* x, i64 stride, int cols, const unsigned long long* draws, const int* seen, const int* fed) { pdl_entry();
    __shared__ int ids[PEN_MAX];
    const unsigned long long* d = draws + (i64)DRAW_WORDS * blockIdx.x;
    const unsigned flags = (unsigned)(d[6] >> 32);
    if (!(flags & 1u)) return;
    const int off = (int)(unsigned)d[7], cnt = (int)(unsigned)(d[7] >> 32);
    for (int i = threadIdx.x; i < cnt; i += PEN_THREADS) ids[i] = seen[off + i];
    const int n = (flags & 2u) ? cnt + 1 : cnt;
    if ((flags & 2u) && threadIdx.x == 0) ids[cnt] = fed[blockIdx.x];
    __syncthreads();
    const float rep = __uint_as_float((unsigned)d[5]), pres = __uint_as_float((unsigned)(d[5] >> 32));
    const float freq = __uint_as_float((unsigned)d[6]);
    float* row = x + (i64)blockIdx.x * stride;
    for (int i = threadIdx.x; i < n; i += PEN_THREADS) {
        const int id = ids[i];
        if (id < 0 || id >= cols) continue;
        int c = 0;
        bool first = true;
        for (int j = 0; j < n; j++) {
            if (ids[j] != id) continue;
            if (j < i) {
                first = false;
                break;
            }
            c++;
        }
        if (!first) continue;
        float v = row[id];
        if (rep != 0.0f && rep != 1.0f) v = v > 0.0f ? __fdiv_rn(v, rep) : __fmul_rn(v, rep);
        row[id] = __fsub_rn(v, __fadd_rn(__fmul_rn(freq, __int2float_rn(c)), pres));
    }
}

// sample_top_f32: dst[r] = the token draws' row r picks (sample.Draw.Pick) from its
// candidates ids[r*kmax:] and vals[r*kmax:] (topk_f32's output for the row, kmax of
// them): a greedy draw (K 0) the first; a row without a candidate its argmax over row r
// of x (rows of cols floats, stride apart), as the host's sampler falls back to Greedy.
// One block of DRAW_THREADS threads a row: the exponentials in parallel, the sums, cuts
// and the draw in candidate order on thread 0, as the host adds them.
extern "C" __global__ void __launch_bounds__(DRAW_THREADS) sample_top_f32(int* dst, const int* ids, const float* vals, int kmax, const unsigned long long* draws, const float* x, i64 stride, int cols) { pdl_entry();
    __shared__ double p[TOPK_MAX];
    __shared__ double s_max, s_sum;
    __shared__ int s_n;
    __shared__ float wv[DRAW_THREADS / 32];
    __shared__ int wi[DRAW_THREADS / 32];
    const int tid = threadIdx.x;
    const unsigned long long* d = draws + (i64)DRAW_WORDS * blockIdx.x;
    const int K = (int)d[0];
    const int* cid = ids + (i64)blockIdx.x * kmax;
    const float* cv = vals + (i64)blockIdx.x * kmax;
    if (tid == 0) {
        const int lim = K > 0 ? min(K, kmax) : 1;
        int n = 0;
        while (n < lim && cid[n] >= 0) n++;
        s_n = n;
        double m = n > 0 ? (double)cv[0] : 0.0;  // maxP: the largest, in order
        for (int i = 1; i < n; i++) m = fmax(m, (double)cv[i]);
        s_max = m;
    }
    __syncthreads();
    const int n = s_n;
    if (n == 0) {
        int id = argmax_block(x + (i64)blockIdx.x * stride, cols, wv, wi);
        if (tid == 0) dst[blockIdx.x] = id;
        return;
    }
    if (K <= 0) {
        if (tid == 0) dst[blockIdx.x] = cid[0];
        return;
    }
    const double t = __longlong_as_double(d[1]), maxL = s_max;
    for (int i = tid; i < n; i += blockDim.x) p[i] = exp_neg(__ddiv_rn(__dsub_rn((double)cv[i], maxL), t));
    __syncthreads();
    if (tid == 0) {
        double sum = 0.0;
        for (int i = 0; i < n; i++) sum = __dadd_rn(sum, p[i]);
        s_sum = sum;
    }
    __syncthreads();
    for (int i = tid; i < n; i += blockDim.x) p[i] = __ddiv_rn(p[i], s_sum);
    __syncthreads();
    if (tid != 0) return;
    const double tp = __longlong_as_double(d[2]), mp = __longlong_as_double(d[3]), u = __longlong_as_double(d[4]);
    int m = n;
    if (tp > 0.0 && tp < 1.0) {
        double cum = 0.0;
        for (int i = 0; i < m; i++) {
            cum = __dadd_rn(cum, p[i]);
            if (cum >= tp) {
                m = i + 1;
                break;
            }
        }
    }
    if (mp > 0.0) {
        const double limit = __dmul_rn(p[0], mp);
        for (int i = 0; i < m; i++) {
            if (p[i] < limit) {
                m = i;
                break;
            }
        }
    }
    int id = cid[0];  // min-p above 1 leaves nothing: the first candidate
    if (m > 0) {
        double total = 0.0;
        for (int i = 0; i < m; i++) total = __dadd_rn(total, p[i]);
        double r = __dmul_rn(u, total);
        id = cid[m - 1];
        for (int i = 0; i < m; i++) {
            r = __dsub_rn(r, p[i]);
            if (r < 0.0) {
                id = cid[i];
                break;
            }
        }
    }
    dst[blockIdx.x] = id;
}

// Draws from the whole row at a temperature (sample.Draw's Row draws; the host writes K
// as -1): sample.drawRow (inference/sample/row.go) in the same operations and the same
// order of sums. The row is cut into parts of ROW_PART tokens, each ROW_RUNS runs of
// sample.RowSegment: sample_row_max finds each part's largest logit, sample_row_sum each
// run's sum (its weights added in token order) and the part's subtree of the runs'
// pairwise sums, and sample_row_draw the tree above the parts and the walk down it. A
// part's subtree is the host's tree's where that tree has 64 leaves or more; over fewer
// runs the host's tree is the part's leftmost subtree, reached by going left past sums
// of zero, so both walks meet the same sums and the same remainders.

#define ROW_THREADS 256
#define ROW_SEG 32                     // sample.RowSegment
#define ROW_PART 2048                  // tokens a part
#define ROW_RUNS (ROW_PART / ROW_SEG)  // runs a part: 64, a subtree of 127 sums
#define ROW_MAX_PARTS 1024             // a row's parts: up to 2,097,152 tokens

// row_draw reports whether draw r is from the whole row.
__device__ __forceinline__ bool row_draw(const unsigned long long* draws, int r) {
    return (long long)draws[(i64)DRAW_WORDS * r] == -1;
}

// row_max: the largest of a row's parts' largest logits (pmax, parts of them), which
// every thread gets; -Inf when none is a number.
__device__ __forceinline__ float row_max(const float* pmax, int parts, float* ws) {
    float m = -INFINITY;
    for (int i = threadIdx.x; i < parts; i += blockDim.x) m = fmaxf(m, pmax[i]);
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if ((threadIdx.x & 31) == 0) ws[threadIdx.x >> 5] = m;
    __syncthreads();
    m = ws[0];
    for (int w = 1; w < (int)(blockDim.x >> 5); w++) m = fmaxf(m, ws[w]);
    return m;
}

// row_weight is drawRow's weight of logit v: e^((v - maxL)/t), 0 below cut (and NaN).
__device__ __forceinline__ double row_weight(float v, float cut, float maxL, double t) {
    return v >= cut ? exp_neg(__ddiv_rn(__dsub_rn((double)v, (double)maxL), t)) : 0.0;
}

// row_cut is drawRow's cut, maxL - 30 t, in floats rounded apart.
__device__ __forceinline__ float row_cut(float maxL, double t) {
    return __fsub_rn(maxL, __fmul_rn(30.0f, __double2float_rn(t)));
}

// sample_row_max: pmax[r*parts + p] = the largest logit (NaNs ignored; -Inf for none) of
// part p (blockIdx.y) of row r (blockIdx.x) of x, for rows with a Row draw.
extern "C" __global__ void __launch_bounds__(ROW_THREADS) sample_row_max(float* pmax, const unsigned long long* draws, const float* x, i64 stride, int cols) { pdl_entry();
    __shared__ float ws[ROW_THREADS / 32];
    if (!row_draw(draws, blockIdx.x)) return;
    const float* row = x + (i64)blockIdx.x * stride;
    const int c0 = blockIdx.y * ROW_PART, c1 = min(cols, c0 + ROW_PART);
    float m = -INFINITY;
    for (int j = c0 + threadIdx.x; j < c1; j += ROW_THREADS) {
        float v = row[j];
        if (v > m) m = v;
    }
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if ((threadIdx.x & 31) == 0) ws[threadIdx.x >> 5] = m;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < ROW_THREADS / 32; w++) m = fmaxf(m, ws[w]);
        pmax[(i64)blockIdx.x * gridDim.y + blockIdx.y] = m;
    }
}

// sample_row_sum: for part p (blockIdx.y) of row r (blockIdx.x) with a Row draw, the
// part's subtree (nodes 1..127, leaves 64..127 the runs' sums, node k the sum of nodes
// 2k and 2k+1) at tree[(r*parts + p)*128 + k]. A row whose largest logit is not finite
// has none (sample_row_draw takes its argmax).
extern "C" __global__ void __launch_bounds__(ROW_THREADS) sample_row_sum(double* tree, const float* pmax, const unsigned long long* draws, const float* x, i64 stride, int cols) { pdl_entry();
    __shared__ double e[ROW_RUNS * (ROW_SEG + 1)];  // run q's weights at q*33: no bank conflicts
    __shared__ double node[2 * ROW_RUNS];
    __shared__ float ws[ROW_THREADS / 32];
    const int r = blockIdx.x, parts = gridDim.y;
    if (!row_draw(draws, r)) return;
    const float maxL = row_max(pmax + (i64)r * parts, parts, ws);
    if (isinf(maxL)) return;
    const double t = __longlong_as_double(draws[(i64)DRAW_WORDS * r + 1]);
    const float cut = row_cut(maxL, t);
    const float* row = x + (i64)r * stride;
    const int c0 = blockIdx.y * ROW_PART;
    for (int q = threadIdx.x; q < ROW_PART; q += ROW_THREADS) {
        const int j = c0 + q;
        e[(q / ROW_SEG) * (ROW_SEG + 1) + q % ROW_SEG] = j < cols ? row_weight(row[j], cut, maxL, t) : 0.0;
    }
    __syncthreads();
    if (threadIdx.x < ROW_RUNS) {
        const double* w = e + threadIdx.x * (ROW_SEG + 1);
        double s = 0.0;
        for (int i = 0; i < ROW_SEG; i++) s = __dadd_rn(s, w[i]);
        node[ROW_RUNS + threadIdx.x] = s;
    }
    __syncthreads();
    if (threadIdx.x < 32) {
        for (int n = ROW_RUNS / 2; n >= 1; n >>= 1) {
            if (threadIdx.x < n) node[n + threadIdx.x] = __dadd_rn(node[2 * (n + threadIdx.x)], node[2 * (n + threadIdx.x) + 1]);
            __syncwarp();
        }
    }
    __syncthreads();
    double* out = tree + ((i64)r * parts + blockIdx.y) * (2 * ROW_RUNS);
    for (int k = 1 + threadIdx.x; k < 2 * ROW_RUNS; k += ROW_THREADS) out[k] = node[k];
}

// row_down is one step of drawRow's walk down a tree at node k (children 2k, 2k+1 of
// sums l and rt): left when r falls before l's end or the right holds nothing, else
// right with l taken off r.
__device__ __forceinline__ int row_down(int k, double l, double rt, double& r) {
    if (r < l || rt == 0.0) return 2 * k;
    r = __dsub_rn(r, l);
    return 2 * k + 1;
}

// sample_row_draw: dst[r] = the token row r's Row draw (its uniform U, temperature Temp)
// takes (sample.drawRow), from sample_row_max's and sample_row_sum's parts of parts
// parts; rows with another draw are left alone (sample_top_f32 or argmax_f32 wrote
// them). One block a row: the tree above the parts in shared memory, the walk by warp 0
// (every lane the same), then the run's weights a lane each and the walk along them.
extern "C" __global__ void __launch_bounds__(ROW_THREADS) sample_row_draw(int* dst, const double* tree, const float* pmax, const unsigned long long* draws, const float* x, i64 stride, int cols, int parts) { pdl_entry();
    __shared__ double top[2 * ROW_MAX_PARTS];
    __shared__ double w[ROW_SEG];
    __shared__ float ws[ROW_THREADS / 32];
    __shared__ int wi[ROW_THREADS / 32];
    const int r = blockIdx.x;
    if (!row_draw(draws, r)) return;
    const float* row = x + (i64)r * stride;
    const float maxL = row_max(pmax + (i64)r * parts, parts, ws);
    __syncthreads();  // ws is argmax_block's too
    if (isinf(maxL)) {
        const int id = argmax_block(row, cols, ws, wi);
        if (threadIdx.x == 0) dst[r] = id;
        return;
    }
    int q = 1;
    while (q < parts) q *= 2;
    const double* pt = tree + (i64)r * parts * (2 * ROW_RUNS);
    for (int p = threadIdx.x; p < q; p += ROW_THREADS) top[q + p] = p < parts ? pt[(i64)p * (2 * ROW_RUNS) + 1] : 0.0;
    __syncthreads();
    for (int n = q / 2; n >= 1; n >>= 1) {
        for (int k = n + threadIdx.x; k < 2 * n; k += ROW_THREADS) top[k] = __dadd_rn(top[2 * k], top[2 * k + 1]);
        __syncthreads();
    }
    if (threadIdx.x >= 32) return;
    const unsigned long long* d = draws + (i64)DRAW_WORDS * r;
    const double t = __longlong_as_double(d[1]), u = __longlong_as_double(d[4]);
    double rem = __dmul_rn(u, top[1]);
    int k = 1;
    while (k < q) k = row_down(k, top[2 * k], top[2 * k + 1], rem);
    const double* sub = pt + (i64)(k - q) * (2 * ROW_RUNS);
    const int part = k - q;
    k = 1;
    while (k < ROW_RUNS) k = row_down(k, sub[2 * k], sub[2 * k + 1], rem);
    const int j0 = part * ROW_PART + (k - ROW_RUNS) * ROW_SEG, lane = threadIdx.x;
    const float cut = row_cut(maxL, t);
    w[lane] = j0 + lane < cols ? row_weight(row[j0 + lane], cut, maxL, t) : 0.0;
    __syncwarp();
    if (lane != 0) return;
    int id = j0;  // rounding past the run's end: its last token with a weight
    for (int i = 0; i < ROW_SEG; i++) {
        if (w[i] == 0.0) continue;
        id = j0 + i;
        rem = __dsub_rn(rem, w[i]);
        if (rem < 0.0) break;
    }
    dst[r] = id;
}
