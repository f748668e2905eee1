// mmgb.cu: the engine's mmg kernels (kernels/cuda/mmg.cu, included as they are) timed
// alone on Llama-3.1-8B's shapes at 64 activation rows, against cuBLAS's f16 GEMM over
// the same weights dequantized to f16 (what Ember runs at 64 streams over its f16
// copies), and checked against it. For iterating on mmg.cu on the GPU machine without
// Go: edit the kernel, run this (seconds), and only then make the PTX and measure the
// engine (build/next-gpu.sh does all three).
//
// Session 27's engine figures (ncu, each kernel alone, 64-stream step): mmg_q4_k 30.4 us
// for 14336x4096 and 27.9 for 4096x14336, mmq_reduce 6.7 and 5.4 us, mmg_xl 3-4 us;
// cuBLASLt's gate and up pair ~59 us for both. build/micro/wg.cu's version (f16 scales,
// hfma2 dequantization, atomic split sums) took 21.9 and 19.3 us.
//
// nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o mmgb mmgb.cu -lcublas && ./mmgb
#include "micro.cuh"
#ifndef MMG_CU
#define MMG_CU "../../kernels/cuda/mmg.cu"  // -DMMG_CU='"DIR/mmg.cu"' for a variant
#endif
#include MMG_CU
#include "q4k.cuh"
#include <cmath>

static int splits_for(int mt, int steps) {  // mmg.go's mgSplits on 132 SMs
    int s = std::max(1, std::min(steps, 2 * 132 / mt));
    const int per = (steps + s - 1) / s;
    return (steps + per - 1) / per;
}

int main() {
    cudaStream_t s;
    cublasHandle_t h = cublas_on(&s);
    const int smem = MG_STAGES * (MG_WS + MG_XS);
    CK(cudaFuncSetAttribute(mmg_q4_k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    std::mt19937 rng(27);
    struct {
        int M, K;
    } shapes[] = {{14336, 4096}, {4096, 14336}, {4096, 4096}};
    for (auto sh : shapes) {
        const int M = sh.M, K = sh.K, N = MG_TN, nb = K / 256, mt = (M + MG_TM - 1) / MG_TM, splits = splits_for(mt, nb);
        const std::vector<uint8_t> hw = random_q4k(M, nb, rng);
        std::normal_distribution<float> nd(0.f, 1.f);
        std::vector<__half> hx((size_t)N * K);
        for (auto& v : hx) v = __float2half(nd(rng));
        uint8_t *W, *P, *XL;
        __half *X, *W16;
        float *D, *R, *part;
        const size_t pbytes = (size_t)mt * nb * MG_WS;
        CK(cudaMalloc(&W, hw.size()));
        CK(cudaMalloc(&P, pbytes));
        CK(cudaMalloc(&XL, (size_t)nb * MG_XS));
        CK(cudaMalloc(&X, hx.size() * 2));
        CK(cudaMalloc(&W16, (size_t)M * K * 2));
        CK(cudaMalloc(&D, (size_t)N * M * 4));
        CK(cudaMalloc(&R, (size_t)N * M * 4));
        CK(cudaMalloc(&part, (size_t)splits * N * M * 4));
        CK(cudaMemcpy(W, hw.data(), hw.size(), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(X, hx.data(), hx.size() * 2, cudaMemcpyHostToDevice));
        mmg_pack_q4_k<<<4096, 256, 0, s>>>(W, nb * 144, M, nb, P);
        dq16<<<(unsigned)(((size_t)M * K + 255) / 256), 256, 0, s>>>(W, M, K, W16);
        mmg_xl<<<(N * K / 8 + 255) / 256, 256, 0, s>>>((const uint8_t*)X, (i64)K * 2, N, K, XL);
        const float one = 1, zero = 0;
        auto gemm = [&]() {
            cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, M, N, K, &one, W16, CUDA_R_16F, K, X, CUDA_R_16F, K, &zero, R, CUDA_R_32F, M,
                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        };
        int* count;
        CK(cudaMalloc(&count, 4 * mt));
        CK(cudaMemset(count, 0, 4 * mt));
        auto prod = [&]() {
            mmg_q4_k<<<dim3(mt, splits), 256, smem, s>>>(P, nullptr, mt, XL, D, nullptr, M, 0, M, 0, K, N, part, count, 1);
        };
        gemm();
        prod();
        CK(cudaStreamSynchronize(s));
        std::vector<float> got((size_t)N * M), want((size_t)N * M);
        CK(cudaMemcpy(got.data(), D, got.size() * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(want.data(), R, want.size() * 4, cudaMemcpyDeviceToHost));
        double maxref = 0, maxerr = 0;
        for (size_t i = 0; i < got.size(); i++) {
            maxref = fmax(maxref, fabs(want[i]));
            maxerr = fmax(maxerr, fabs(got[i] - want[i]));
        }
        if (getenv("MMGB_PROFILE")) {  // one launch of each, for ncu
            prod();
            mmg_q4_k<<<dim3(2 * mt, 1), 256, smem, s>>>(P, P, mt, XL, D, part, M, M, M, M, K, N, nullptr, nullptr, 1);
            CK(cudaStreamSynchronize(s));
            for (void* p : {(void*)W, (void*)P, (void*)XL, (void*)X, (void*)W16, (void*)D, (void*)R, (void*)part, (void*)count}) CK(cudaFree(p));
            continue;
        }
        const float tk = graph_best_ms(s, [&]() { for (int i = 0; i < 20; i++) prod(); }, 2, 5);
        const float tx = graph_best_ms(s, [&]() { for (int i = 0; i < 20; i++) mmg_xl<<<(N * K / 8 + 255) / 256, 256, 0, s>>>((const uint8_t*)X, (i64)K * 2, N, K, XL); }, 2, 5);
        const float tg = graph_best_ms(s, [&]() { for (int i = 0; i < 20; i++) gemm(); }, 2, 5);
        printf("%5dx%-5d 64 rows, %2d splits: mmg_q4_k %6.1f us (%.2f TB/s of its copy; splits summed by its last blocks), mmg_xl %4.1f; cuBLAS f16 %6.1f us; max difference %.2e of %.2e%s\n",
               M, K, splits, tk * 50, pbytes / (tk / 20 * 1e-3) / 1e12, tx * 50, tg * 50, maxerr, maxref,
               maxerr <= 1e-3 * maxref ? "" : "  WRONG");
        if (splits > 1) {  // a gate and up pair of this shape: one launch, no split (D1 in part)
            auto pair = [&]() {
                mmg_q4_k<<<dim3(2 * mt, 1), 256, smem, s>>>(P, P, mt, XL, D, part, M, M, M, M, K, N, nullptr, nullptr, 1);
            };
            CK(cudaMemset(D, 0, (size_t)N * M * 4));
            CK(cudaMemset(part, 0, (size_t)N * M * 4));
            pair();
            CK(cudaStreamSynchronize(s));
            double perr = 0;
            for (float* out : {D, part}) {
                CK(cudaMemcpy(got.data(), out, got.size() * 4, cudaMemcpyDeviceToHost));
                for (size_t i = 0; i < got.size(); i++) perr = fmax(perr, fabs(got[i] - want[i]));
            }
            const float tp = graph_best_ms(s, [&]() { for (int i = 0; i < 20; i++) pair(); }, 2, 5);
            printf("%5dx%-5d pair (two such weights, one launch, no split): mmg_q4_k %6.1f us (%.2f TB/s); cuBLAS f16 twice %6.1f us; max difference %.2e%s\n",
                   M, K, tp * 50, 2 * pbytes / (tp / 20 * 1e-3) / 1e12, 2 * tg * 50, perr, perr <= 1e-3 * maxref ? "" : "  WRONG");
        }
        for (void* p : {(void*)W, (void*)P, (void*)XL, (void*)X, (void*)W16, (void*)D, (void*)R, (void*)part, (void*)count}) CK(cudaFree(p));
    }
    return 0;
}
