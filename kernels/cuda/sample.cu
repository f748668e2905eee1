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

// argmax_f32: dst[r] = the index of the largest element of row r of x (rows of cols
// floats, stride floats apart), exactly as sample.Greedy: NaNs ignored, the lowest index
// on ties, 0 for a row of NaNs. One block of ARGMAX_THREADS threads per row (blockIdx.x):
// each thread scans its strided share of the row in increasing order keeping the first
// of its largest, then the block reduces the (value, index) pairs, warps by shuffles and
// then the warps' winners in warp 0.
extern "C" __global__ void __launch_bounds__(ARGMAX_THREADS) argmax_f32(int* dst, const float* x, i64 stride, int cols) { pdl_entry();
    __shared__ float wv[ARGMAX_THREADS / 32];
    __shared__ int wi[ARGMAX_THREADS / 32];
    const float* row = x + (i64)blockIdx.x * stride;
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
    if (warp != 0) return;
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
    if (lane == 0) dst[blockIdx.x] = bi < 0 ? 0 : bi;
}
