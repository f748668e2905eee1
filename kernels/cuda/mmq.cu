// mmq.cu: the kernels of the tensor-core products (mmq.cuh): dense (mmq_, mmq32_,
// mmq16_), grouped by expert (mmq_id_, mmq_id16_, mmq_id8_), runs of per-head products
// (mmq_run_), and the reduce of their K splits.
#include "mmq.cuh"

// mmq_*: dst = w x^T for n activation rows; grid (ceil(M/128), ceil(n/TN) * splits) in
// tiles of TN = 64 (mmq_), 32 (mmq32_: two blocks an SM for batched decode) or 16
// (mmq16_) activation rows.
#define MMQ_DENSE(NAME, T, TN, MINB)                                                                                  \
    extern "C" __global__ void __launch_bounds__(MQ_NT, MINB)                                                         \
        mmq##NAME(const uint8_t* W, i64 wstride, const uint8_t* X, i64 xstride, float* D, i64 dstride, int M, int K,  \
                  int N, float* part, int ntile) {                                                                    \
        pdl_entry();                                                                                                  \
        const int col0 = (blockIdx.y % ntile) * TN;                                                                   \
        const MqCols cols = {col0, min(TN, N - col0), nullptr, 1, 0};                                                 \
        mmq<T, mq_stages<T, TN>(), TN>(W, wstride, X, xstride, D, dstride, M, K, cols, part, N, blockIdx.y / ntile,      \
                                       gridDim.y / ntile);                                                    \
    }
#define MMQ(NAME, T)                      \
    MMQ_DENSE(_##NAME, T, MQ_TN, 1)       \
    MMQ_DENSE(32_##NAME, T, 32, 2)        \
    MMQ_DENSE(16_##NAME, T, 16, 2)        \
    MMQ_ID(id_##NAME, T, MQ_TN, 1)        \
    MMQ_ID(id16_##NAME, T, 16, 2)         \
    MMQ_ID(id8_##NAME, T, 8, 2)
// mmq_id_*: the pairs of a mixture of experts grouped by expert (moe_group, tiles of TN
// pairs at most: mmq_id_ 64, mmq_id16_ 16, mmq_id8_ 8): y block t takes tile t of the
// list (expert, first row in map, rows), idle past ntiles[0]; its expert's matrix is
// estride bytes after the previous one's.
#define MMQ_ID(NAME, T, TN, MINB)                                                                                     \
    extern "C" __global__ void __launch_bounds__(MQ_NT, MINB)                                                         \
        mmq_##NAME(const uint8_t* W, i64 wstride, const uint8_t* X, i64 xstride, float* D, i64 dstride, int M, int K,  \
                   const int* map, const int4* tiles, const int* ntiles, i64 estride, int xdiv) {                     \
        pdl_entry();                                                                                                  \
        if ((int)blockIdx.y >= ntiles[0]) return;                                                                     \
        const int4 t = tiles[blockIdx.y];                                                                             \
        const MqCols cols = {t.y, t.z, map, xdiv, 0};                                                                 \
        mmq<T, mq_stages<T, TN>(), TN>(W + (i64)t.x * estride, wstride, X, xstride, D, dstride, M, K, cols, nullptr, 0, \
                                       0, 1);                                                                 \
    }
// mmq_run_*: a uniform run of products (per-head projections): product h multiplies the
// matrix estride bytes after product h-1's by r activation rows (rows h*r.. of X, or with
// shared rows 0..r-1 for every h) into dst rows h*r..; grid (ceil(M/128), heads *
// ceil(r/64) * nsplit), the K steps divided among nsplit blocks a tile as mmq_* divides
// them (partial sums in part, heads*r rows of M, for mmq_reduce).
#define MMQ_RUN(NAME, T)                                                                                              \
    extern "C" __global__ void __launch_bounds__(MQ_NT, 1)                                                            \
        mmq_run_##NAME(const uint8_t* W, i64 wstride, const uint8_t* X, i64 xstride, float* D, i64 dstride, int M,    \
                       int K, int r, i64 estride, int shared, float* part, int nsplit) {                              \
        pdl_entry();                                                                                                  \
        const int tiles = gridDim.y / nsplit, ty = blockIdx.y % tiles, tph = (r + MQ_TN - 1) / MQ_TN;                \
        const int h = ty / tph, c = ty % tph;                                                                         \
        const MqCols cols = {h * r + c * MQ_TN, min(MQ_TN, r - c * MQ_TN), nullptr, 1, shared ? h * r : 0};          \
        mmq<T, 3>(W + (i64)h * estride, wstride, X, xstride, D, dstride, M, K, cols, part, tiles / tph * r,          \
                  blockIdx.y / tiles, nsplit);                                                                        \
    }
MMQ(q4_k, T_Q4_K)
MMQ(q6_k, T_Q6_K)
MMQ(q8_0, T_Q8_0)
MMQ(q5_0, T_Q5_0)
MMQ(q4_0, T_Q4_0)
MMQ_RUN(q4_k, T_Q4_K)
MMQ_RUN(q6_k, T_Q6_K)
MMQ_RUN(q8_0, T_Q8_0)
MMQ_RUN(q5_0, T_Q5_0)
MMQ_RUN(q4_0, T_Q4_0)

// mmq_reduce: dst[c, r] = sum over s of part[s][c][r], s in order.
extern "C" __global__ void mmq_reduce(float* D, i64 dstride, const float* part, int M, int N, int splits) { pdl_entry();
    const i64 n = (i64)M * N;
    for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n; i += (i64)gridDim.x * blockDim.x) {
        float s = part[i];
        for (int z = 1; z < splits; z++) s += part[(i64)z * n + i];
        D[(i / M) * dstride + i % M] = s;
    }
}

