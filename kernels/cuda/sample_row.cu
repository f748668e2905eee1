// sample_row.cu: draws on the device that need more than a row's top k candidates:
// penalties applied to the row first, and draws from the whole row at a temperature
// (sample.Draw's Row draws). feed.go's SampleAhead launches them around sample.cu's.
#include "sample.cuh"

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

// row_draw reports whether draw r is from the whole row (K -1); row_parts whether
// sample_row_max and sample_row_sum serve it (a whole-row draw, or a nucleus draw: K -2).
__device__ __forceinline__ bool row_draw(const unsigned long long* draws, int r) {
    return (long long)draws[(i64)DRAW_WORDS * r] == -1;
}
__device__ __forceinline__ bool row_parts(const unsigned long long* draws, int r) {
    const long long k = (long long)draws[(i64)DRAW_WORDS * r];
    return k == -1 || k == -2;
}

// block_maxn is the largest of every thread's m (NaNs ignored), which every thread gets,
// for a block of any size (common.cuh's block_max takes SM_THREADS); ws holds a float a
// warp.
__device__ __forceinline__ float block_maxn(float m, float* ws) {
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if ((threadIdx.x & 31) == 0) ws[threadIdx.x >> 5] = m;
    __syncthreads();
    m = ws[0];
    for (int w = 1; w < (int)(blockDim.x >> 5); w++) m = fmaxf(m, ws[w]);
    return m;
}

// row_max: the largest of a row's parts' largest logits (pmax, parts of them), which
// every thread gets; -Inf when none is a number.
__device__ __forceinline__ float row_max(const float* pmax, int parts, float* ws) {
    float m = -INFINITY;
    for (int i = threadIdx.x; i < parts; i += blockDim.x) m = fmaxf(m, pmax[i]);
    return block_maxn(m, ws);
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
// part p (blockIdx.y) of row r (blockIdx.x) of x, for rows with a Row or nucleus draw.
extern "C" __global__ void __launch_bounds__(ROW_THREADS) sample_row_max(float* pmax, const unsigned long long* draws, const float* x, i64 stride, int cols) { pdl_entry();
    __shared__ float ws[ROW_THREADS / 32];
    if (!row_parts(draws, blockIdx.x)) return;
    const float* row = x + (i64)blockIdx.x * stride;
    const int c0 = blockIdx.y * ROW_PART, c1 = min(cols, c0 + ROW_PART);
    float m = -INFINITY;
    for (int j = c0 + threadIdx.x; j < c1; j += ROW_THREADS) {
        float v = row[j];
        if (v > m) m = v;
    }
    m = block_maxn(m, ws);
    if (threadIdx.x == 0) pmax[(i64)blockIdx.x * gridDim.y + blockIdx.y] = m;
}

// sample_row_sum: for part p (blockIdx.y) of row r (blockIdx.x) with a Row or nucleus draw, the
// part's subtree (nodes 1..127, leaves 64..127 the runs' sums, node k the sum of nodes
// 2k and 2k+1) at tree[(r*parts + p)*128 + k]. A row whose largest logit is not finite
// has none (sample_row_draw takes its argmax).
extern "C" __global__ void __launch_bounds__(ROW_THREADS) sample_row_sum(double* tree, const float* pmax, const unsigned long long* draws, const float* x, i64 stride, int cols) { pdl_entry();
    __shared__ double e[ROW_RUNS * (ROW_SEG + 1)];  // run q's weights at q*33: no bank conflicts
    __shared__ double node[2 * ROW_RUNS];
    __shared__ float ws[ROW_THREADS / 32];
    const int r = blockIdx.x, parts = gridDim.y;
    if (!row_parts(draws, r)) return;
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

// row_top: the tree above a row's parts (pt: sample_row_sum's subtrees of the row's
// parts parts) in top (leaves q + p the parts' sums, q the least power of two >= parts,
// zeros past the last; node k the sum of nodes 2k and 2k+1, node 1 the row's total),
// which every thread of the block calls; it returns q.
__device__ __forceinline__ int row_top(const double* pt, int parts, double* top) {
    int q = 1;
    while (q < parts) q *= 2;
    for (int p = threadIdx.x; p < q; p += blockDim.x) top[q + p] = p < parts ? pt[(i64)p * (2 * ROW_RUNS) + 1] : 0.0;
    __syncthreads();
    for (int n = q / 2; n >= 1; n >>= 1) {
        for (int k = n + threadIdx.x; k < 2 * n; k += blockDim.x) top[k] = __dadd_rn(top[2 * k], top[2 * k + 1]);
        __syncthreads();
    }
    return q;
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
    const double* pt = tree + (i64)r * parts * (2 * ROW_RUNS);
    const int q = row_top(pt, parts, top);
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

// Nucleus draws (sample.Draw's Nucleus draws; the host writes K as -2): top-p or min-p
// with no top-k, sample.drawNucleus (inference/sample/nucleus.go) in the same operations
// and order. The candidates are walked in order a round at a time: the first round is
// topk_f32's kmax first of the row; past it, each round is the NUC_ROUND next after the
// last (topk_block from a boundary, then a bitonic sort), their ids kept in order in a
// scratch of the row's width, from which the draw walks the kept candidates again.

#define NUC_THREADS TOPK_THREADS
#if EM_SM90
#define NUC_ROUND 8192
#define NUC_SMEM 225280  // feed.go's nucSmem: dynamic shared memory a block (>= sizeof(nuc_smem))
#else  // the compatibility PTX: a block within an RTX 40's 99 KiB (feed.go's nucCompatRound, nucCompatSmem)
#define NUC_ROUND 2048
#define NUC_SMEM 69632
#endif
#define NUC_WALK 8  // weights a walk on one thread loads ahead of its additions

// nuc_smem is sample_nucleus_f32's shared memory: topk_block's, a round's candidates in
// order (packed: ~key above the column, so that ascending order is the candidates'
// order) and their weights, the tree above the parts, and the walk's state.
struct nuc_smem {
    topk_smem<NUC_ROUND> tk;
    unsigned long long c[NUC_ROUND];
    double w[NUC_ROUND];
    double top[2 * ROW_MAX_PARTS];
    float ws[NUC_THREADS / 32];
    int wi[NUC_THREADS / 32];
    double sum;               // the walk's running sum, then the draw's remainder
    int n, base, id, end;     // kept, walked before this round, drawn, ended
    unsigned bkey;            // the boundary: the last candidate walked
    int bcol;
};
static_assert(sizeof(nuc_smem) <= NUC_SMEM, "nuc_smem outgrew NUC_SMEM");

// nuc_pack is a candidate (key, column) packed so that unsigned order is the
// candidates' order; nuc_col and nuc_val undo it (the value of a key: -0 became +0,
// which weighs the same).
__device__ __forceinline__ unsigned long long nuc_pack(unsigned key, int col) {
    return ((unsigned long long)~key << 32) | (unsigned)col;
}
__device__ __forceinline__ int nuc_col(unsigned long long c) { return (int)(unsigned)c; }
__device__ __forceinline__ float nuc_val(unsigned long long c) {
    const unsigned key = ~(unsigned)(c >> 32);
    return __uint_as_float((key & 0x80000000u) ? (key & 0x7fffffffu) : ~key);
}

// nuc_round loads round i of the row's candidates into s.c in order and their weights
// (drawRow's: cut and maxL the row's, t the temperature) into s.w, writes their columns
// at order[base:], and returns how many it holds; *cap is how many a full round holds
// (fewer: the row has no more). Round 0 is the kmax candidates at ids and vals, round
// 1 the nfirst next after (s.bkey, s.bcol), each later one four times as many as the
// one before, at most nround (<= NUC_ROUND). Every thread calls it.
__device__ int nuc_round(nuc_smem& s, int i, const int* ids, const float* vals, int kmax, int nfirst, int nround, const float* row, int cols, float cut, float maxL, double t, int* order, int* cap) {
    const int tid = threadIdx.x, bd = blockDim.x;
    int m;
    if (i == 0) {
        int c = -1;
        if (tid < kmax) {
            c = ids[tid];
            if (c >= 0) s.c[tid] = nuc_pack(topk_key(vals[tid]), c);
        }
        m = __syncthreads_count(c >= 0);  // candidates first, then -1s
        *cap = kmax;
    } else {
        const int size = i > 3 ? nround : min(nround, nfirst << (2 * (i - 1)));
        m = topk_block(row, cols, size, s.bkey, s.bcol, s.tk);
        int p = 1;
        while (p < m) p *= 2;
        for (int j = tid; j < p; j += bd) s.c[j] = j < m ? nuc_pack(s.tk.ckey[j], s.tk.cidx[j]) : ~0ull;
        __syncthreads();
        for (int k = 2; k <= p; k *= 2) {  // bitonic sort, ascending
            for (int h = k / 2; h > 0; h /= 2) {
                for (int j = tid; j < p / 2; j += bd) {
                    const int a = 2 * j - (j & (h - 1)), b = a + h;  // a's bit h clear
                    const unsigned long long x = s.c[a], y = s.c[b];
                    if ((x > y) == ((a & k) == 0)) {
                        s.c[a] = y;
                        s.c[b] = x;
                    }
                }
                __syncthreads();
            }
        }
        *cap = size;
    }
    for (int j = tid; j < m; j += bd) {
        const unsigned long long c = s.c[j];
        s.w[j] = row_weight(nuc_val(c), cut, maxL, t);
        order[s.base + j] = nuc_col(c);
    }
    __syncthreads();
    return m;
}

// sample_nucleus_f32: dst[r] = the token row r's nucleus draw (temperature Temp, top-p
// TopP, min-p MinP, uniform U) takes, from topk_f32's kmax first candidates of each row
// (ids and vals, 1 <= kmax <= TOPK_MAX a row), then rounds of nfirst growing to nround
// (nuc_round), and sample_row_max's and sample_row_sum's parts of parts parts (the whole row's total
// weight, for top-p); order is a scratch of cols ints a row. Rows with another draw are left alone. One block of NUC_THREADS a row
// and NUC_SMEM bytes of dynamic shared memory: the weights in parallel, the walks on
// thread 0 in candidate order, as the host's. A weight is 0 exactly below the cut.
extern "C" __global__ void __launch_bounds__(NUC_THREADS) sample_nucleus_f32(int* dst, const int* ids, const float* vals, int kmax, const double* tree, const float* pmax, const unsigned long long* draws, const float* x, i64 stride, int cols, int parts, int* order, int nfirst, int nround) { pdl_entry();
    extern __shared__ __align__(16) unsigned char nuc_raw[];
    nuc_smem& s = *reinterpret_cast<nuc_smem*>(nuc_raw);
    const int r = blockIdx.x, tid = threadIdx.x;
    const unsigned long long* d = draws + (i64)DRAW_WORDS * r;
    if ((long long)d[0] != -2) return;
    const float* row = x + (i64)r * stride;
    const float maxL = row_max(pmax + (i64)r * parts, parts, s.ws);
    __syncthreads();  // ws is argmax_block's too
    if (isinf(maxL)) {
        const int id = argmax_block(row, cols, s.ws, s.wi);
        if (tid == 0) dst[r] = id;
        return;
    }
    const double t = __longlong_as_double(d[1]), tp = __longlong_as_double(d[2]);
    const double mp = __longlong_as_double(d[3]), u = __longlong_as_double(d[4]);
    const bool topP = tp > 0.0 && tp < 1.0;
    double target = 0.0;
    if (topP) {
        row_top(tree + (i64)r * parts * (2 * ROW_RUNS), parts, s.top);
        target = __dmul_rn(tp, s.top[1]);
    }
    const float cut = row_cut(maxL, t);
    ids += (i64)r * kmax;
    vals += (i64)r * kmax;
    order += (i64)r * cols;
    if (tid == 0) {
        s.sum = 0.0;
        s.base = 0;
        s.end = 0;
    }
    int rounds = 0, cap;
    // The walk: how many candidates the nucleus keeps (s.n) and their running sum.
    while (true) {
        __syncthreads();
        if (s.end) break;
        const int m = nuc_round(s, rounds++, ids, vals, kmax, nfirst, nround, row, cols, cut, maxL, t, order, &cap);
        if (tid == 0) {
            double sum = s.sum;
            int n = -1;
            for (int i0 = 0; i0 < m && n < 0; i0 += NUC_WALK) {
                double e[NUC_WALK];  // loaded first: the chain is the additions alone
#pragma unroll
                for (int k = 0; k < NUC_WALK; k++) e[k] = i0 + k < m ? s.w[i0 + k] : 0.0;
#pragma unroll
                for (int k = 0; k < NUC_WALK; k++) {
                    if (i0 + k >= m || n >= 0) break;
                    if (!(e[k] > 0.0) || (mp > 0.0 && e[k] < mp)) {  // below the cut, or min-p's end
                        n = i0 + k;
                        break;
                    }
                    sum = __dadd_rn(sum, e[k]);
                    if (topP && sum >= target) n = i0 + k + 1;
                }
            }
            if (n < 0 && m < cap) n = m;  // the row has no more candidates
            s.sum = sum;
            if (n >= 0) {
                s.n = s.base + n;
                s.end = 1;
            } else {
                s.base += m;
                s.bkey = ~(unsigned)(s.c[m - 1] >> 32);
                s.bcol = nuc_col(s.c[m - 1]);
            }
        }
    }
    const int n = s.n;
    if (n == 0) {  // min-p above 1: Greedy
        const int id = argmax_block(row, cols, s.ws, s.wi);
        if (tid == 0) dst[r] = id;
        return;
    }
    // The draw: the uniform's share of the kept sum, the kept candidates walked again
    // (from order, their weights made again, when there were several rounds).
    double rem = __dmul_rn(u, s.sum);
    int id = -1;
    for (int base = 0; base < n && id < 0; base += NUC_ROUND) {
        const int m = min(NUC_ROUND, n - base);
        if (rounds > 1) {
            __syncthreads();
            for (int j = tid; j < m; j += blockDim.x) s.w[j] = row_weight(row[order[base + j]], cut, maxL, t);
            __syncthreads();
        }
        if (tid == 0) {
            for (int j0 = 0; j0 < m && id < 0; j0 += NUC_WALK) {
                double e[NUC_WALK];
#pragma unroll
                for (int k = 0; k < NUC_WALK; k++) e[k] = j0 + k < m ? s.w[j0 + k] : 0.0;
#pragma unroll
                for (int k = 0; k < NUC_WALK; k++) {
                    if (j0 + k >= m) break;
                    rem = __dsub_rn(rem, e[k]);
                    if (rem < 0.0) {
                        id = order[base + j0 + k];
                        break;
                    }
                }
            }
            if (id < 0 && base + m >= n) id = order[n - 1];  // rounding: the last kept
            s.id = id;
        }
        __syncthreads();
        id = s.id;
    }
    if (tid == 0) dst[r] = id;
}
