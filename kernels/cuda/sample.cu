// sample.cu: token sampling on the GPU. Greedy decoding needs one id per logits row, so
// the host reads back rows ids instead of rows x vocabulary floats.
#include "sample.cuh"

// argmax_scan4 scans a's four floats, indices j to j + 3.
__device__ __forceinline__ void argmax_scan4(float4 a, int j, float& bv, int& bi) {
    argmax_scan(a.x, j, bv, bi), argmax_scan(a.y, j + 1, bv, bi), argmax_scan(a.z, j + 2, bv, bi), argmax_scan(a.w, j + 3, bv, bi);
}

// argmax_chunks4 scans the 16-byte chunks c, c + bd, ... below c1 of the row at r4 as
// one thread of a block of bd threads: four loads in flight (16 floats a thread a round
// trip, where argmax_block's four floats leave a greedy step's 128,256 logits ~31
// dependent round trips of the block: ~20 us of an 8B step on the H200, session 41).
__device__ __forceinline__ void argmax_chunks4(const float4* r4, int c, int c1, int bd, float& bv, int& bi) {
    for (; c + 3 * bd < c1; c += 4 * bd) {
        float4 a[4];
#pragma unroll
        for (int u = 0; u < 4; u++) a[u] = r4[c + u * bd];
#pragma unroll
        for (int u = 0; u < 4; u++) argmax_scan4(a[u], 4 * (c + u * bd), bv, bi);
    }
    for (; c < c1; c += bd) argmax_scan4(r4[c], 4 * c, bv, bi);
}

// argmax_block4 is argmax_block over a row at a 16-byte boundary: thread t takes the
// row's 16-byte chunks t, t + blockDim.x, ... (argmax_chunks4), then the floats past the
// last whole chunk one by one. Each thread still meets its indices in increasing order,
// and argmax_better is a total order: the same winner.
__device__ __forceinline__ int argmax_block4(const float* row, int cols, float* wv, int* wi) {
    float bv = 0.0f;
    int bi = -1;
    const int bd = blockDim.x, n4 = cols >> 2;
    argmax_chunks4((const float4*)row, threadIdx.x, n4, bd, bv, bi);
    for (int j = 4 * n4 + threadIdx.x; j < cols; j += bd) argmax_scan(row[j], j, bv, bi);
    return argmax_reduce(bv, bi, wv, wi);
}

// argmax_f32: dst[r] = the index of the largest element of row r of x (rows of cols
// floats, stride floats apart), exactly as sample.Greedy (argmax_block, or
// argmax_block4 for a row at a 16-byte boundary). One block of ARGMAX_THREADS threads
// per row (blockIdx.x).
extern "C" __global__ void __launch_bounds__(ARGMAX_THREADS) argmax_f32(int* dst, const float* x, i64 stride, int cols) { pdl_entry();
    __shared__ float wv[ARGMAX_THREADS / 32];
    __shared__ int wi[ARGMAX_THREADS / 32];
    const float* row = x + (i64)blockIdx.x * stride;
    const int id = ((uintptr_t)row & 15) == 0 ? argmax_block4(row, cols, wv, wi) : argmax_block(row, cols, wv, wi);
    if (threadIdx.x == 0) dst[blockIdx.x] = id;
}

#if EM_SM90  // a cluster of blocks: Hopper only
// ARGMAX_PARTS is argmax_f32_c's cluster: the blocks that share one row.
#define ARGMAX_PARTS 8

// argmax_put stores the pair (v, i) as one 8-byte word into slot p of pw, an array in the
// shared memory of the cluster's rank 0 (distributed shared memory).
__device__ __forceinline__ void argmax_put(unsigned long long* pw, unsigned p, float v, int i) {
    const unsigned long long w = (unsigned long long)(unsigned)i << 32 | __float_as_uint(v);
    uint32_t a = (uint32_t)__cvta_generic_to_shared(pw + p), ra;
    asm volatile("mapa.shared::cluster.u32 %0, %1, 0;" : "=r"(ra) : "r"(a));
    asm volatile("st.shared::cluster.u64 [%0], %1;" ::"r"(ra), "l"(w) : "memory");
}
// argmax_f32_c: argmax_f32 of rows at a 16-byte boundary (stride % 4 == 0, cols % 4 ==
// 0) by clusters of ARGMAX_PARTS blocks, cluster r row r: block p (its rank) scans the
// row's 16-byte chunks [n4 p / P, n4 (p + 1) / P) as argmax_block4 scans its row
// (argmax_chunks4) and reduces them as it does (argmax_reduce_pair); each block's
// winner goes into rank 0's shared memory, which takes the best of the P after one
// cluster barrier. argmax_better is a total order, so the winner is argmax_f32's. One
// block read a 128,256-float greedy row in ~8 dependent round trips through one SM's
// port to L2 (argmax_f32 10.1 us alone on an H100, session 97's ncu); eight read it in
// about one.
extern "C" __global__ void __cluster_dims__(ARGMAX_PARTS, 1, 1) __launch_bounds__(ARGMAX_THREADS, 1)
    argmax_f32_c(int* dst, const float* x, i64 stride, int cols) {
    pdl_entry();
    // Every block of the cluster has started once this barrier's wait returns (before the
    // first store into rank 0's shared memory).
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
    __shared__ float wv[ARGMAX_THREADS / 32];
    __shared__ int wi[ARGMAX_THREADS / 32];
    __shared__ unsigned long long pw[ARGMAX_PARTS];  // rank 0's: each block's winner
    unsigned p;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(p));
    const int r = blockIdx.x / ARGMAX_PARTS, n4 = cols / 4;
    float bv = 0.0f;
    int bi = -1;
    argmax_chunks4((const float4*)(x + (i64)r * stride), (int)((i64)n4 * p / ARGMAX_PARTS) + threadIdx.x,
                   (int)((i64)n4 * (p + 1) / ARGMAX_PARTS), blockDim.x, bv, bi);
    const bool w0 = argmax_reduce_pair(bv, bi, wv, wi);
    const int lane = threadIdx.x & 31;
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
    if (w0 && lane == 0) argmax_put(pw, p, bv, bi);
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
    if (p != 0) return;  // its winner is in rank 0's memory
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
    if (w0) {
        const unsigned long long w = lane < ARGMAX_PARTS ? pw[lane] : 0xffffffff00000000ull;
        bv = __uint_as_float((unsigned)w), bi = (int)(w >> 32);
        argmax_warp(bv, bi);
        if (lane == 0) dst[r] = bi < 0 ? 0 : bi;
    }
}
#endif

// Top-k: the k first elements of a row under sample's candidate order (larger value
// first, lower index on ties; NaN and -Inf never candidates; +0 equals -0), so the host
// reads back k (id, value) pairs per row instead of the row.

// topk_f32: for row r (blockIdx.x) of x (rows of cols floats, stride floats apart), the
// part of the row a block takes (blockIdx.y: chunk floats from blockIdx.y * chunk, the
// last part what is left) gives the k first of its elements in the candidate order:
// ids[o*k + i] and vals[o*k + i], o = r * gridDim.y + blockIdx.y, are the (column,
// value) of the i-th, for i < min(k, valid elements), then -1 and -Inf; 1 <= k <=
// TOPK_MAX. With xids not null the ids written are xids' entries at those columns (rows
// of xids as of x): a second pass over the first pass's candidates of every part (their
// values as a row, parts in column order, each part's sorted, so a lower slot holds the
// lower column among equal values) names the row's own columns. One block of
// TOPK_THREADS threads per part (topk_block).
extern "C" __global__ void __launch_bounds__(TOPK_THREADS) topk_f32(int* ids, float* vals, const float* x, i64 stride, int cols, int k, int chunk, const int* xids) { pdl_entry();
    __shared__ topk_smem<TOPK_MAX> s;
    const int c0 = blockIdx.y * chunk;
    cols = min(chunk, cols - c0);  // this block's part
    const float* row = x + (i64)blockIdx.x * stride + c0;
    const int n = topk_block(row, cols, k, TOPK_ALL, -1, s);
    const i64 o = (i64)blockIdx.x * gridDim.y + blockIdx.y;
    int* oid = ids + o * k;
    float* oval = vals + o * k;
    const int tid = threadIdx.x;
    if (tid < n) {
        const int idx = s.cidx[tid], rank = topk_rank(s, n, tid);
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
