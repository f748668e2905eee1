// wg.cu: a product of 64 activation rows over Q4_K-like weights on Hopper's warpgroup
// tensor instructions (wgmma), the weights dequantized in registers (wgmma's A operand
// from registers) and the f16 activation rows read by the tensor cores from shared
// memory (its B operand by descriptor). Session 27's question: mmf (mma.sync, the A
// fragments dequantized in registers, each warp loading the B fragments of all 64 rows
// from shared memory: ncu says 74% L1/shared throughput, 26% issue slots, 35% tensor
// pipe, 43 us for 14336x4096) against the same dequantization feeding wgmma, whose B
// operand a warpgroup reads once for its 64 weight rows, not once a warp.
//
// The weights are mmf's packed layout but for the quants' order: per tile of 128 rows and
// 256-element step, a row's 160 bytes are eight (a, b) f16 pairs (the sub-blocks' scale
// and negated min: w = q * a + b, as mmf) and then four 32-byte pieces, one per lane
// c = lane % 4, holding exactly the quants of that lane's A fragments: word i, byte
// 2h + j: low nibble element 16(2i+h) + 2c + j, high nibble the same + 8. So a lane's
// fragments for the whole step are two 16-byte loads a row. The activation rows are
// f16, stored a stage in the no-swizzle K-major core-matrix layout (8 rows x 16 bytes,
// 128 contiguous bytes; the next core matrix in K 128 bytes on, in N 4 KiB on).
//
// Checked against a plain kernel (each output one thread, f32 sums of the same f16
// weights times the activations) and timed against cuBLAS's f16 GEMM of the same
// weights dequantized (what Ember runs at 64 streams over its f16 copies), each the
// best of 5 replays of a graph of 20 launches. Both descriptor readings are tried
// (SWAP: leading and stride byte offsets exchanged); the right one matches.
//
// nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -o wg wg.cu -lcublas && ./wg
#include "micro.cuh"
#include "../../kernels/cuda/mmg.cu"  // the wgmma, shared-memory, fence and bulk-copy helpers (mg_*)
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cmath>
#include <random>
#include <vector>

#define ROWB 160                  // packed bytes a weight row a step
#define WG_TM 128                 // weight rows a block (two warpgroups of 64)
#define WG_TN 64                  // activation rows a block
#define XST (WG_TN * 256 * 2)     // activation bytes a stage (32 KiB)
#define WST (WG_TM * ROWB)        // weight bytes a stage (20 KiB)

__device__ __forceinline__ void cp16(uint32_t dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}
// deq: the two quants of v's bytes picked by sel as f16 halves, q * a + b.
__device__ __forceinline__ uint32_t deq(uint32_t v, uint32_t sel, __half2 a, __half2 b) {
    const uint32_t p = __byte_perm(v, 0x64646464u, sel);
    const __half2 k = __half2half2(__ushort_as_half(0x6400));
    const __half2 w = __hfma2(__hsub2(*(const __half2*)&p, k), a, b);
    return *(const uint32_t*)&w;
}

__device__ __forceinline__ uint64_t desc(uint32_t addr, uint32_t nstride, bool swap) {
    const uint64_t lbo = swap ? nstride : 128, sbo = swap ? 128 : nstride;
    return (uint64_t)((addr & 0x3ffff) >> 4) | ((lbo >> 4) << 16) | ((sbo >> 4) << 32);
}

// wg_step is a warpgroup's work on one stage: its two rows' (ra, rb) scales and quants
// (HS: the stage holds 256 / HS elements of K) dequantized into A fragments, then the
// 2 NW wgmma against the activations at xs. PART 1: the raw quant words as fragments (no
// dequantization; wrong results, the timing of the rest); PART 2: no tensor work.
template <int HS, bool SWAP, int PART>
__device__ __forceinline__ void wg_step(float* acc, uint32_t ra, uint32_t rb, uint32_t xs, int c) {
    constexpr int NW = 8 / HS, KC = 256 / HS;
    uint32_t SA[NW], SB[NW], QA[NW], QB[NW];
#pragma unroll
    for (int u = 0; u < NW / 4; u++) {
        const uint4 sa = mg_lds128(ra + 16 * u), sb = mg_lds128(rb + 16 * u);
        const uint4 qa = mg_lds128(ra + 32 / HS + (32 / HS) * c + 16 * u), qb = mg_lds128(rb + 32 / HS + (32 / HS) * c + 16 * u);
        SA[4 * u] = sa.x, SA[4 * u + 1] = sa.y, SA[4 * u + 2] = sa.z, SA[4 * u + 3] = sa.w;
        SB[4 * u] = sb.x, SB[4 * u + 1] = sb.y, SB[4 * u + 2] = sb.z, SB[4 * u + 3] = sb.w;
        QA[4 * u] = qa.x, QA[4 * u + 1] = qa.y, QA[4 * u + 2] = qa.z, QA[4 * u + 3] = qa.w;
        QB[4 * u] = qb.x, QB[4 * u + 1] = qb.y, QB[4 * u + 2] = qb.z, QB[4 * u + 3] = qb.w;
    }
    uint32_t A[2 * NW][4];
#pragma unroll
    for (int i = 0; i < NW; i++) {
        const __half2 a0 = __low2half2(*(const __half2*)&SA[i]), b0 = __high2half2(*(const __half2*)&SA[i]);
        const __half2 a1 = __low2half2(*(const __half2*)&SB[i]), b1 = __high2half2(*(const __half2*)&SB[i]);
        const uint32_t la = QA[i] & 0x0f0f0f0fu, ha = (QA[i] >> 4) & 0x0f0f0f0fu;
        const uint32_t lb = QB[i] & 0x0f0f0f0fu, hb = (QB[i] >> 4) & 0x0f0f0f0fu;
        A[2 * i][0] = deq(la, 0x4140, a0, b0), A[2 * i][1] = deq(lb, 0x4140, a1, b1);
        A[2 * i][2] = deq(ha, 0x4140, a0, b0), A[2 * i][3] = deq(hb, 0x4140, a1, b1);
        A[2 * i + 1][0] = deq(la, 0x4342, a0, b0), A[2 * i + 1][1] = deq(lb, 0x4342, a1, b1);
        A[2 * i + 1][2] = deq(ha, 0x4342, a0, b0), A[2 * i + 1][3] = deq(hb, 0x4342, a1, b1);
        if (PART == 1)
            A[2 * i][0] = la, A[2 * i][1] = lb, A[2 * i][2] = ha, A[2 * i][3] = hb, A[2 * i + 1][0] = la ^ SA[i],
            A[2 * i + 1][1] = lb ^ SB[i], A[2 * i + 1][2] = ha, A[2 * i + 1][3] = hb;
    }
    if (PART == 2) {
#pragma unroll
        for (int t = 0; t < 2 * NW; t++) acc[t] += __uint_as_float(A[t][0] ^ A[t][1] ^ A[t][2] ^ A[t][3]);
        return;
    }
    mg_fence_acc(acc);
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int t = 0; t < 2 * NW; t++) mg_mma(acc, A[t], desc(xs + 256 * t, (KC / 8) * 128, SWAP));
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    mg_fence_acc(acc);
}

// wg_store writes (one split) or adds (several) a thread's outputs of row r.
__device__ __forceinline__ void wg_store(const float* acc, float* D, int M, int r, int c, int splits) {
#pragma unroll
    for (int jn = 0; jn < 8; jn++) {
        float* d = D + (size_t)(8 * jn + 2 * c) * M + r;
        float* at[4] = {d, d + M, d + 8, d + M + 8};
        for (int e = 0; e < 4; e++) {
            if (splits > 1)
                atomicAdd(at[e], acc[4 * jn + e]);
            else
                *at[e] = acc[4 * jn + e];
        }
    }
}

// wg_q4k: D[n, r] (+)= sum_k w[r, k] x[n, k] for the block's 128 rows and 64 activation
// rows over its split's steps (gridDim.y splits; more than one: atomic adds into zeros).
// A stage holds 256 / HS elements of K (a step or half of one), STAGES of them in flight.
template <int STAGES, int HS, bool SWAP, int PART = 0>
__global__ void __launch_bounds__(256) wg_q4k(const uint8_t* __restrict__ P, const __half* __restrict__ X, float* D, int M, int K,
                                              int splits) {
    constexpr int KC = 256 / HS, RB = ROWB / HS, WS = WG_TM * RB, XS = WG_TN * KC * 2;
    extern __shared__ __align__(128) uint8_t sm[];
    const int tid = threadIdx.x, wg = tid >> 7, warp = (tid >> 5) & 3, lane = tid & 31, g = lane >> 2, c = lane & 3;
    const int nb = K / 256, per = nb * HS / splits, h0 = blockIdx.y * per;
    const uint8_t* wt = P + (size_t)blockIdx.x * nb * WST;
    const uint32_t base = (uint32_t)__cvta_generic_to_shared(sm);
    auto issue = [&](int st, int hs) {  // half-step hs: step hs / HS, part hs % HS
        const uint32_t ws = base + st * (WS + XS), xs = ws + WS;
        const int s = hs / HS, h = hs % HS;
        const uint8_t* src = wt + (size_t)s * WST;
#pragma unroll
        for (int q0 = 0; q0 < WG_TM * 5; q0 += 256) {  // chunk 0: scales, 1..4: lane c's quants
            const int q = q0 + tid;
            if (WG_TM * 5 % 256 != 0 && q >= WG_TM * 5) break;
            const int r = q / 5, ch = q - 5 * r;
            const int off = ch == 0 ? 16 * h : 32 + 32 * (ch - 1) + 16 * h;
            for (int u = 0; u < (HS == 1 ? 2 : 1); u++) cp16(ws + r * RB + (ch == 0 ? 0 : 32 / HS + (32 / HS) * (ch - 1)) + 16 * u, src + r * ROWB + off + 16 * u);
        }
        for (int q = tid; q < WG_TN * (KC / 8); q += 256) {
            const int n = q / (KC / 8), kc = q % (KC / 8);
            cp16(xs + ((((n >> 3) * (KC / 8) + kc)) << 7) + ((n & 7) << 4), X + (size_t)n * K + hs * KC + kc * 8);
        }
    };
    float acc[32];
#pragma unroll
    for (int i = 0; i < 32; i++) acc[i] = 0.f;
    for (int p = 0; p < STAGES - 1; p++) {
        if (p < per) issue(p, h0 + p);
        asm volatile("cp.async.commit_group;" ::: "memory");
    }
    for (int j = 0; j < per; j++) {
        asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 2) : "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        __syncthreads();
        if (j + STAGES - 1 < per) issue((j + STAGES - 1) % STAGES, h0 + j + STAGES - 1);
        asm volatile("cp.async.commit_group;" ::: "memory");
        const uint32_t ws = base + (j % STAGES) * (WS + XS), xs = ws + WS;
        const uint32_t ra = ws + (wg * 64 + warp * 16 + g) * RB, rb = ra + 8 * RB;
        wg_step<HS, SWAP, PART>(acc, ra, rb, xs, c);
    }
    wg_store(acc, D, M, blockIdx.x * WG_TM + wg * 64 + warp * 16 + g, c, splits);
}

// wg_tma: wg_q4k with each stage two bulk copies (cp.async.bulk, completing on the
// stage's mbarrier): the tile's 20 KiB of packed weights of the step, and the step's
// 32 KiB of activations, which XL holds already in the shared-memory layout (as the
// kernel that writes the activations could write them). Thread 0 issues; no thread
// computes an address per 16 bytes.
template <int STAGES>
__global__ void __launch_bounds__(256) wg_tma(const uint8_t* __restrict__ P, const uint8_t* __restrict__ XL, float* D, int M, int K,
                                              int splits) {
    extern __shared__ __align__(128) uint8_t sm[];
    __shared__ __align__(8) uint64_t bars[STAGES];
    const int tid = threadIdx.x, wg = tid >> 7, warp = (tid >> 5) & 3, lane = tid & 31, g = lane >> 2, c = lane & 3;
    const int nb = K / 256, per = nb / splits, s0 = blockIdx.y * per;
    const uint8_t* wt = P + (size_t)blockIdx.x * nb * WST;
    const uint32_t base = (uint32_t)__cvta_generic_to_shared(sm), bar0 = (uint32_t)__cvta_generic_to_shared(bars);
    if (tid == 0) {
        for (int i = 0; i < STAGES; i++) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar0 + 8 * i) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    auto issue = [&](int st, int s) {
        const uint32_t ws = base + st * (WST + XST), xs = ws + WST, bar = bar0 + 8 * st;
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(WST + XST) : "memory");
        mg_bulk(ws, wt + (size_t)s * WST, WST, bar);
        mg_bulk(xs, XL + (size_t)s * XST, XST, bar);
    };
    float acc[32];
#pragma unroll
    for (int i = 0; i < 32; i++) acc[i] = 0.f;
    if (tid == 0)
        for (int p = 0; p < STAGES - 1 && p < per; p++) issue(p, s0 + p);
    for (int j = 0; j < per; j++) {
        __syncthreads();  // every thread is done with the stage refilled next
        if (tid == 0 && j + STAGES - 1 < per) issue((j + STAGES - 1) % STAGES, s0 + j + STAGES - 1);
        const int st = j % STAGES;
        mg_wait(bar0 + 8 * st, (j / STAGES) & 1);
        const uint32_t ws = base + st * (WST + XST), xs = ws + WST;
        const uint32_t ra = ws + (wg * 64 + warp * 16 + g) * ROWB, rb = ra + 8 * ROWB;
        wg_step<1, false, 0>(acc, ra, rb, xs, c);
    }
    wg_store(acc, D, M, blockIdx.x * WG_TM + wg * 64 + warp * 16 + g, c, splits);
}

// xlayout writes X's rows (64 x K f16) a step at a time in the stage layout of wg_q4k.
__global__ void xlayout(const __half* X, uint8_t* XL, int K) {
    const int q = blockIdx.x * blockDim.x + threadIdx.x;  // one 16-byte chunk: row n, chunk kc of step s
    const int nc = K / 8;
    if (q >= WG_TN * nc) return;
    const int n = q / nc, kk = q % nc, s = kk / 32, kc = kk % 32;
    *(uint4*)(XL + (size_t)s * XST + ((((n >> 3) * 32 + kc)) << 7) + ((n & 7) << 4)) = *(const uint4*)(X + (size_t)n * K + kk * 8);
}

// check_time runs body (20 launches of a product into D, memsets included) once, checks
// D against ref, times the best of 5 replays of it as a graph, and prints a line.
template <typename F>
static void check_time(const char* name, cudaStream_t s, F body, const float* D, const std::vector<float>& ref, int M, int K,
                       int splits, double bytes, bool timing_only) {
    body();
    CK(cudaStreamSynchronize(s));
    std::vector<float> got((size_t)WG_TN * M);
    CK(cudaMemcpy(got.data(), D, got.size() * 4, cudaMemcpyDeviceToHost));
    double maxref = 0, maxerr = 0;
    for (size_t i = 0; i < got.size(); i++) {
        maxref = fmax(maxref, fabs(ref[i]));
        maxerr = fmax(maxerr, fabs(got[i] - ref[i]));
    }
    float ms = graph_best_ms(s, body, 2, 5);
    printf("%-28s %dx%d splits %d: %7.1f us a product (%5.2f TB/s of Q4_K-size bytes), max error %.2e of max %.2e%s\n", name, M, K,
           splits, ms * 1000 / 20, bytes / (ms / 20 * 1e-3) / 1e12, maxerr, maxref, timing_only || maxerr < 1e-3 * maxref ? "" : "  WRONG");
}

template <int STAGES>
static void run_tma(const char* name, cudaStream_t s, const uint8_t* P, const uint8_t* XL, float* D, const std::vector<float>& ref, int M,
                    int K, int splits, double bytes) {
    auto k = wg_tma<STAGES>;
    const int smem = STAGES * (WST + XST);
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    check_time(name, s, [&]() {
        for (int i = 0; i < 20; i++) {
            if (splits > 1) CK(cudaMemsetAsync(D, 0, (size_t)WG_TN * M * 4, s));
            k<<<dim3(M / WG_TM, splits), 256, smem, s>>>(P, XL, D, M, K, splits);
        }
    }, D, ref, M, K, splits, bytes, false);
}

// weight decodes element k of row r from the packed layout, as deq does.
__device__ __forceinline__ __half weight(const uint8_t* P, int r, int k, int K) {
    const int nb = K / 256, tile = r / WG_TM, s = k / 256, e = k % 256;
    const uint8_t* row = P + ((size_t)tile * nb + s) * WST + (r % WG_TM) * ROWB;
    const int t = e / 16, kk = e % 16, c = (kk % 8) / 2, jj = kk % 2, hi = kk >= 8, i = t / 2, h = t % 2;
    const uint8_t byte = row[32 + 32 * c + 4 * i + 2 * h + jj];
    const int q = hi ? byte >> 4 : byte & 15;
    const __half a = *(const __half*)(row + 4 * i), b = *(const __half*)(row + 4 * i + 2);
    const __half qh = __ushort_as_half((unsigned short)(0x6400 | q));
    return __hfma(__hsub(qh, __ushort_as_half(0x6400)), a, b);
}

__global__ void ref_q4k(const uint8_t* P, const __half* X, float* D, int M, int K, int N) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x, n = blockIdx.y;
    if (r >= M || n >= N) return;
    float s = 0;
    for (int k = 0; k < K; k++) s += __half2float(weight(P, r, k, K)) * __half2float(X[(size_t)n * K + k]);
    D[(size_t)n * M + r] = s;
}

__global__ void dequant16(const uint8_t* P, __half* W, int M, int K) {
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)M * K) return;
    W[i] = weight(P, (int)(i / K), (int)(i % K), K);
}

template <int STAGES, int HS, bool SWAP, int PART = 0>
static void run(const char* name, cudaStream_t s, const uint8_t* P, const __half* X, float* D, const std::vector<float>& ref, int M,
                int K, int splits, double bytes) {
    auto k = wg_q4k<STAGES, HS, SWAP, PART>;
    const int smem = STAGES * (WST + XST) / HS;
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    check_time(name, s, [&]() {
        for (int i = 0; i < 20; i++) {
            if (splits > 1) CK(cudaMemsetAsync(D, 0, (size_t)WG_TN * M * 4, s));
            k<<<dim3(M / WG_TM, splits), 256, smem, s>>>(P, X, D, M, K, splits);
        }
    }, D, ref, M, K, splits, bytes, PART != 0);
}

int main() {
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return 1;
    cublasSetStream(h, s);
    std::mt19937 rng(27);
    struct Shape {
        int M, K, splits;
    } shapes[] = {{14336, 4096, 2}, {4096, 14336, 8}, {4096, 4096, 4}};
    for (auto sh : shapes) {
        const int M = sh.M, K = sh.K, N = WG_TN, nb = K / 256;
        std::vector<uint8_t> hp((size_t)M * nb * ROWB);
        std::uniform_int_distribution<int> byte(0, 255);
        std::uniform_real_distribution<float> ua(0.001f, 0.01f), ub(0.0f, 0.05f);
        for (size_t i = 0; i < hp.size(); i++) hp[i] = (uint8_t)byte(rng);
        for (int t = 0; t < M / WG_TM; t++)
            for (int st = 0; st < nb; st++)
                for (int r = 0; r < WG_TM; r++) {
                    uint8_t* row = hp.data() + (((size_t)t * nb + st) * WG_TM + r) * ROWB;
                    for (int i = 0; i < 8; i++) {
                        const __half a = __float2half(ua(rng)), b = __float2half(-ub(rng));
                        memcpy(row + 4 * i, &a, 2);
                        memcpy(row + 4 * i + 2, &b, 2);
                    }
                }
        std::normal_distribution<float> nd(0.f, 1.f);
        std::vector<__half> hx((size_t)N * K);
        for (auto& v : hx) v = __float2half(nd(rng));
        uint8_t* P;
        __half *X, *W16;
        float *D, *R;
        CK(cudaMalloc(&P, hp.size()));
        CK(cudaMalloc(&X, hx.size() * 2));
        CK(cudaMalloc(&W16, (size_t)M * K * 2));
        CK(cudaMalloc(&D, (size_t)N * M * 4));
        CK(cudaMalloc(&R, (size_t)N * M * 4));
        CK(cudaMemcpy(P, hp.data(), hp.size(), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(X, hx.data(), hx.size() * 2, cudaMemcpyHostToDevice));
        ref_q4k<<<dim3((M + 127) / 128, N), 128, 0, s>>>(P, X, R, M, K, N);
        dequant16<<<(unsigned)(((size_t)M * K + 255) / 256), 256, 0, s>>>(P, W16, M, K);
        CK(cudaStreamSynchronize(s));
        std::vector<float> ref((size_t)N * M);
        CK(cudaMemcpy(ref.data(), R, ref.size() * 4, cudaMemcpyDeviceToHost));
        const double bytes = (double)M * K * 4.5 / 8;  // Q4_K's bytes (144 a 256)
        run<2, 1, false>("wgmma 2 stages of 256", s, P, X, D, ref, M, K, sh.splits, bytes);
        uint8_t* XL;
        CK(cudaMalloc(&XL, (size_t)N * K * 2));
        xlayout<<<(N * K / 8 + 255) / 256, 256, 0, s>>>(X, XL, K);
        run_tma<2>("bulk copies, 2 stages", s, P, XL, D, ref, M, K, sh.splits, bytes);
        run_tma<3>("bulk copies, 3 stages", s, P, XL, D, ref, M, K, sh.splits, bytes);
        run_tma<4>("bulk copies, 4 stages", s, P, XL, D, ref, M, K, sh.splits, bytes);
        run_tma<2>("bulk copies, 2 st, split x2", s, P, XL, D, ref, M, K, sh.splits == 8 ? 7 : 2 * sh.splits, bytes);
        CK(cudaFree(XL));
        const float one = 1, zero = 0;
        auto gemm = [&]() {
            if (cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, M, N, K, &one, W16, CUDA_R_16F, K, X, CUDA_R_16F, K, &zero, D, CUDA_R_32F, M,
                             CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)
                printf("cublasGemmEx failed\n");
        };
        gemm();
        CK(cudaStreamSynchronize(s));
        std::vector<float> got((size_t)N * M);
        CK(cudaMemcpy(got.data(), D, got.size() * 4, cudaMemcpyDeviceToHost));
        double maxref = 0, maxerr = 0;
        for (size_t i = 0; i < got.size(); i++) {
            maxref = fmax(maxref, fabs(ref[i]));
            maxerr = fmax(maxerr, fabs(got[i] - ref[i]));
        }
        float ms = graph_best_ms(s, [&]() { for (int i = 0; i < 20; i++) gemm(); }, 2, 5);
        printf("%-28s %dx%d: %7.1f us a product (f16 weights, %5.2f TB/s), max error %.2e\n", "cuBLAS f16 GEMM", M, K, ms * 1000 / 20,
               (double)M * K * 2 / (ms / 20 * 1e-3) / 1e12, maxerr);
        CK(cudaFree(P));
        CK(cudaFree(X));
        CK(cudaFree(W16));
        CK(cudaFree(D));
        CK(cudaFree(R));
    }
    return 0;
}
