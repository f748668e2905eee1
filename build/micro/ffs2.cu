// ffs2.cu (session 69): why the engine's ffn kernel (kernels/cuda/ffn.cu) is ~1.6 us a
// layer slower than session 68's first micro form (ffs_old.cuh, commit 9db16de's ffs.cu:
// 34.3 against the chain's 36.2 us a layer; the engine's code 35.9 in s69-call1). Times
// the chain, the old kernel (cs8 gpc2 w8, RED 2, DFIRST) and the engine's code with one
// difference at a time removed (V bits): 1 the cluster's SwiGLU read as two 16-byte
// DSMEM loads (the engine: eight 4-byte ones), 2 no f32 gate/up/SwiGLU rows written, 4 E
// a compile-time 4,096, 8 the old kernel's sum (all loads in registers).
// nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/ffs2 ffs2.cu && /tmp/ffs2
#include "micro.cuh"
#include "../../kernels/cuda/matmul.cu"
#include "../../kernels/cuda/quant.cu"
#include "../../kernels/cuda/ffn.cu"
#include "ffnhost.cuh"
#include <cmath>

#define FS_E 4096
#define FS_F 14336
#define FS_NG (FS_F / 256)
#define FS_NCL (FS_F / FFN_XQ)
#include "ffs_old.cuh"

template <int NCL>
__device__ __forceinline__ void v_sum(const float* P, int E, float* dst, int lo, int hi, float4* sm) {
    constexpr int F4 = FS_E / FFN_CS / 4, T = 32 * FFN_W, S = T / F4, MC = (NCL + S - 1) / S;
    const int q = threadIdx.x % F4, p = threadIdx.x / F4;
    const int c0 = p * NCL / S, c1 = (p + 1) * NCL / S;
    float4 v[MC];
#pragma unroll
    for (int k = 0; k < MC; k++) v[k] = c0 + k < c1 ? __ldcg((const float4*)(P + (i64)(c0 + k) * E + lo) + q) : make_float4(0, 0, 0, 0);
    float4 s = v[0];
#pragma unroll
    for (int k = 1; k < MC; k++)
        if (c0 + k < c1) s.x += v[k].x, s.y += v[k].y, s.z += v[k].z, s.w += v[k].w;
    sm[p * F4 + q] = s;
    __syncthreads();
    if (p == 0) {
        float4 t = sm[q];
        for (int k = 1; k < S; k++) {
            const float4 u = sm[k * F4 + q];
            t.x += u.x, t.y += u.y, t.z += u.z, t.w += u.w;
        }
        *((float4*)(dst + lo) + q) = t;
    }
}

// ffnv: ffn.cu's ffn<DT> with V's differences.
template <int DT, int V>
__device__ __forceinline__ void ffnv(const uint8_t* xq, int Earg, const uint8_t* gate, const uint8_t* up, i64 gws, float* g, float* u,
                                     int F, float* sw, uint8_t* x14, const uint8_t* down, i64 dws, float* dst, float* P, unsigned* cnt) {
    const int E = (V & 4) ? FS_E : Earg;
    extern __shared__ __align__(16) uint8_t ffn_sm[];
    const int st = ffn_stage(E);
    uint8_t* xs = ffn_sm;
    float* gs = (float*)(ffn_sm + st);
    float* us = gs + FFN_RA;
    float* vs = us + FFN_RA;
    uint8_t* xc = (uint8_t*)(vs + FFN_RA);
    __shared__ int last;
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    const int cl = blockIdx.x / FFN_CS, lane = threadIdx.x & 31, wp = threadIdx.x >> 5, nb = F / 256;
    const int i0 = FFN_XQ * cl + FFN_RA * (int)r;
    ffn_gu(xq, E, gate, up, gws, i0, xs, gs, us);
    const int lo = E * (int)r / FFN_CS, hi = E * ((int)r + 1) / FFN_CS;
    FfnWt cur[FFN_GPC];
    ffn_dfirst<DT>(down, dws, nb, lo, hi, FFN_GPC * cl, cur);
    __syncthreads();
    for (int i = threadIdx.x; i < FFN_RA; i += 32 * FFN_W) {
        const float gv = gs[i], uv = us[i];
        const float e = (float)exp(-(double)gv);
        const float v = gv / (1.0f + e) * uv;
        vs[i] = v;
        if (!(V & 2)) g[i0 + i] = gv, u[i0 + i] = uv, sw[i0 + i] = v;
    }
    cluster_sync();
    if (wp < FFN_GPC) {
        const int k = 256 * wp + 8 * lane, pr = k / FFN_RA, off = k % FFN_RA;
        float v[8];
        if (V & 1) {
            const float4 a = fs_peer(vs + off, pr), b = fs_peer(vs + off + 4, pr);
            v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
        } else {
#pragma unroll
            for (int i = 0; i < 8; i++) v[i] = cluster_ld(vs + off + i, pr);
        }
        q8k_quant_warp(v, xc, wp, FFN_XQ);
        if (r == 0) {
            const int ib = FFN_GPC * cl + wp;
            *(uint2*)(x14 + 256 * ib + 8 * lane) = *(const uint2*)(xc + 256 * wp + 8 * lane);
            if ((lane & 1) == 0) ((int*)(x14 + Q8K_BSUMS(F)))[16 * ib + lane / 2] = ((const int*)(xc + Q8K_BSUMS(FFN_XQ)))[16 * wp + lane / 2];
            if (lane == 0) ((float*)(x14 + F))[ib] = ((const float*)(xc + FFN_XQ))[wp];
        }
    }
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
    __syncthreads();
    const int ncl = F / FFN_XQ;
    ffn_down<DT>(down, dws, nb, lo, hi, FFN_GPC * cl, xc, P + (i64)cl * E, cur);
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned old;
        asm volatile("fence.acq_rel.gpu;" ::: "memory");
        asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(cnt + r) : "memory");
        last = old + 1 == (unsigned)ncl;
        if (last) asm volatile("fence.acq_rel.gpu;" ::: "memory");
    }
    __syncthreads();
    if (last) {
        if (V & 8) v_sum<FS_NCL>(P, E, dst, lo, hi, (float4*)xs);
        else ffn_sum(P, E, ncl, dst, lo, hi, (float4*)xs);
        if (threadIdx.x == 0) cnt[r] = 0;
    }
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

template <int DT, int V>
__global__ void __launch_bounds__(32 * FFN_W, 2) kv(FFN_ARGS) {
    ffnv<DT, V>(xq, E, gate, up, gws, g, u, F, sw, x14, down, dws, dst, P, cnt);
}

struct Var {
    const char* name;
    void (*q4)(FFN_ARGS);
    void (*q6)(FFN_ARGS);
};
#define VV(N) {"engine V" #N, kv<T_Q4_K, N>, kv<T_Q6_K, N>}

int main() {
    FfnRun R(FS_E, FS_F, FS_NCL, FFN_CS);
    const int L = R.L, gap = R.gap, gws = R.gws, xn14 = R.xnf;
    std::vector<FfnLayer>& ly = R.ly;
    const size_t bytes = R.bytes;
    uint8_t *x = R.x, *x14c = R.x14c, *x14f = R.x14f;
    float *gf = R.gf, *uf = R.uf, *P = R.P;
    unsigned *cnt = R.cnt, *out = R.out;
    cudaStream_t s = R.s;
    auto chain = [&]() { R.chain(); };
    const int smem = ffn_stage(FS_E) + 3 * 4 * FFN_RA + xbytes(FFN_XQ);
    const int grid = FS_NCL * FFN_CS;
    FsArgs oa = {};
    oa.gws = gws, oa.x = x, oa.P = P, oa.x14 = x14f, oa.cnt = cnt, oa.red = 2, oa.dfirst = 1;
    const int osmem = 5248 + 3 * 4 * 64 + xbytes(512);
    auto old = [&]() {
        for (int l = 0; l < L; l++) {
            const FfnLayer& y = ly[l];
            FsArgs a = oa;
            a.gate = y.gate, a.up = y.up, a.down = y.down, a.dws = rowbytes(y.dtype, FS_F), a.d = y.df;
            launch_cl(s, y.dtype == T_Q4_K ? ffs<8, 2, 8, T_Q4_K> : ffs<8, 2, 8, T_Q6_K>, grid, 256, osmem, 8, a);
            if (gap) launch(s, kgap, 1, 32, out, gap);
        }
    };
    printf("%.2f GB of FFN weights in %d layers; gap %d ns; grid %d, smem %d (old %d)\n", bytes / 1e9, L, gap, grid, smem, osmem);
    Var vars[] = {VV(0), VV(1), VV(2), VV(4), VV(8), VV(12), VV(13), VV(15)};
    auto check = [&](const char* name) {
        CK(cudaStreamSynchronize(s));
        CK(cudaGetLastError());
        double worst, amax;
        R.down_diff(&worst, &amax);
        std::vector<uint8_t> a(xn14), b(xn14);
        CK(cudaMemcpy(a.data(), x14c, xn14, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(b.data(), x14f, xn14, cudaMemcpyDeviceToHost));
        size_t diff = 0;
        for (int j = 0; j < xn14; j++) diff += a[j] != b[j];
        printf("%-12s down max |diff| %.2g of max |out|; Q8_K bytes differing %zu%s\n", name, worst / amax, diff,
               diff || worst > 2e-6 * amax ? "  WRONG" : "");
        CK(cudaMemset(x14f, 0, xn14));
    };
    // variant returns the launches of variant v's 32 layers (for a check and the graphs)
    auto variant = [&](const Var& v) {
        return [&, v]() {
            for (int l = 0; l < L; l++) {
                const FfnLayer& y = ly[l];
                launch_cl(s, y.dtype == T_Q4_K ? v.q4 : v.q6, grid, 32 * FFN_W, smem, FFN_CS, (const uint8_t*)x, FS_E,
                          (const uint8_t*)y.gate, (const uint8_t*)y.up, (i64)gws, gf, uf, FS_F, gf, x14f, (const uint8_t*)y.down,
                          (i64)rowbytes(y.dtype, FS_F), y.df, P, cnt);
                if (gap) launch(s, kgap, 1, 32, out, gap);
            }
        };
    };
    chain();
    old();
    check("old");
    for (auto& v : vars) {
        variant(v)();
        check(v.name);
    }
    for (int r = 0; r < 3; r++) {
        printf("round %d: chain %.2f, old %.2f", r, 1e3 * graph_best_ms(s, chain, 2, 5) / L, 1e3 * graph_best_ms(s, old, 2, 5) / L);
        for (auto& v : vars) printf(", %s %.2f", v.name + 7, 1e3 * graph_best_ms(s, variant(v), 2, 5) / L);
        printf(" us a layer\n");
    }
    return 0;
}
