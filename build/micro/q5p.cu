// q5p.cu: would DeepSeek-V2-Lite's routed downs run faster from a packed Q5_0 copy than
// from the widened Q8_0 rows they read now? (Session 101's next step 2.) The downs are
// Q5_0 in the file (K = 1,408 rules out the K-quants) and widened to Q8_0 at upload
// (widen.go): 34 bytes a 32-value block against 22, 18.4 MB a MoE layer against 11.9.
// Whether fewer bytes help depends on what bounds mmv_id_q8_0: bytes or round trips.
//
// Times, per launch, a chain of NL PDL launches (one graph, best of 5 replays), each on
// its own region of a pool far larger than L2 (six experts of 2,048 rows of 1,408, as a
// V2-Lite token's routed downs), of:
//   q8  mmv_id_q8_0 itself (kernels/cuda/matmul.cu) over the widened rows;
//   q5p mmv_id_q5p (matmul.cu since session 102; this file held it first) over the
//       packed rows: mv1_q8_0's lanes and steps (lane pair a block, each lane 16
//       values), each lane loading 8 bytes of nibbles, its half's 16 high bits and the
//       scale (22 bytes a block), its four dp4a words built as
//       nibble | (bit ? 0 : 0xF0) (widenQ5Block's q5Fill, by a multiply spread). The
//       integer block sums, and so the bits, are mmv_id_q8_0's.
// First both run once on region 0 and their outputs are compared bit for bit.
//
// nvcc -gencode arch=compute_90a,code=sm_90a -O3 -fmad=false -o /tmp/q5p q5p.cu && /tmp/q5p
// Session 102 (H100): 0 of 12,288 outputs differ; q8 8.44 us a launch (2.19 TB/s), q5p 7.40.
#include <cstring>
#include <vector>
#include "micro.cuh"
#include "../../kernels/cuda/matmul.cu"  // mmv_id_q8_0, mmv_id_q5p and mv1.cuh's helpers

#define NE 6     // experts a launch (V2-Lite's routed slots)
#define NM 2048  // rows of an expert's down
#define NK 1408  // its columns
#define NL 512   // launches a graph
#define NREG 64  // regions of the pools (each launch the next)

static uint16_t f2h_host(float f) {  // small normal values only
    uint32_t x;
    memcpy(&x, &f, 4);
    const uint32_t s = x >> 16 & 0x8000, e = (x >> 23 & 255) - 127 + 15, m = x >> 13 & 0x3ff;
    return (uint16_t)(s | e << 10 | m);
}

int main() {
    const int nb = NK / 32, s8 = (34 * nb + 15) / 16 * 16, s5 = (22 * nb + 15) / 16 * 16;
    const size_t r8 = (size_t)NE * NM * s8, r5 = (size_t)NE * NM * s5;  // a region's bytes
    std::vector<uint8_t> h8(r8), h5(r5);
    uint32_t rng = 12345;
    auto next = [&]() { rng = rng * 1664525u + 1013904223u; return rng >> 8; };
    for (int r = 0; r < NE * NM; r++) {
        uint8_t* o8 = &h8[(size_t)r * s8];
        uint8_t* o5 = &h5[(size_t)r * s5];
        for (int ib = 0; ib < nb; ib++) {
            int v[32];  // the 5-bit values, 0..31 (the value is v - 16)
            for (int j = 0; j < 32; j++) v[j] = next() & 31;
            const uint16_t d = f2h_host(0.001f + (next() & 1023) * 1e-5f);
            uint32_t qh = 0;
            for (int j = 0; j < 32; j++) {
                o8[32 * ib + j] = (uint8_t)(int8_t)(v[j] - 16);
                qh |= (uint32_t)(v[j] >> 4) << j;
            }
            memcpy(o8 + 32 * nb + 2 * ib, &d, 2);
            for (int h = 0; h < 2; h++)
                for (int k = 0; k < 4; k++) {
                    const int a = 16 * h + k;
                    o5[16 * ib + 8 * h + k] = (uint8_t)((v[a] & 15) | (v[a + 4] & 15) << 4);
                    o5[16 * ib + 8 * h + 4 + k] = (uint8_t)((v[a + 8] & 15) | (v[a + 12] & 15) << 4);
                }
            memcpy(o5 + 16 * nb + 4 * ib, &qh, 4);
            memcpy(o5 + 20 * nb + 2 * ib, &d, 2);
        }
    }
    const int xs = NK + 4 * nb;  // a Q8_0 activation row: NK int8, then nb float scales
    std::vector<uint8_t> hx((size_t)NE * xs);
    for (int z = 0; z < NE; z++) {
        for (int j = 0; j < NK; j++) hx[(size_t)z * xs + j] = (uint8_t)(next() & 255);
        for (int ib = 0; ib < nb; ib++) {
            const float f = 0.01f + (next() & 255) * 1e-4f;
            memcpy(&hx[(size_t)z * xs + NK + 4 * ib], &f, 4);
        }
    }
    uint8_t *p8, *p5, *x;
    float *d8, *d5;
    int* ids;
    CK(cudaMalloc(&p8, r8 * NREG));
    CK(cudaMalloc(&p5, r5 * NREG));
    for (int g = 0; g < NREG; g++) {
        CK(cudaMemcpy(p8 + g * r8, h8.data(), r8, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(p5 + g * r5, h5.data(), r5, cudaMemcpyHostToDevice));
    }
    CK(cudaMalloc(&x, hx.size()));
    CK(cudaMemcpy(x, hx.data(), hx.size(), cudaMemcpyHostToDevice));
    CK(cudaMalloc(&d8, NE * NM * 4));
    CK(cudaMalloc(&d5, NE * NM * 4));
    int hid[NE];
    for (int z = 0; z < NE; z++) hid[z] = z;
    CK(cudaMalloc(&ids, sizeof hid));
    CK(cudaMemcpy(ids, hid, sizeof hid, cudaMemcpyHostToDevice));
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    const int nrb = NM / 8, grid = nrb * NE, smem = NK + 4 * nb;
    auto run8 = [&](int g) {
        launch_smem(s, mmv_id_q8_0, dim3(grid), 128, smem, (const uint8_t*)(p8 + g * r8), (i64)s8, (const uint8_t*)x, (i64)xs, d8,
                    (i64)NM, NM, NK, 1, (const int*)ids, (i64)NM * s8, 1, nrb, 1, (const uint8_t*)nullptr, (float*)nullptr, (i64)0, 0, 0);
    };
    auto run5 = [&](int g) {
        launch_smem(s, mmv_id_q5p, dim3(grid), 128, smem, (const uint8_t*)(p5 + g * r5), (i64)s5, (const uint8_t*)x, (i64)xs, d5,
                    (i64)NM, NM, NK, 1, (const int*)ids, (i64)NM * s5, 1, nrb, 1, (const uint8_t*)nullptr, (float*)nullptr, (i64)0, 0, 0);
    };
    run8(0);
    run5(0);
    CK(cudaStreamSynchronize(s));
    std::vector<uint32_t> o8(NE * NM), o5(NE * NM);
    CK(cudaMemcpy(o8.data(), d8, NE * NM * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(o5.data(), d5, NE * NM * 4, cudaMemcpyDeviceToHost));
    int diff = 0;
    for (int i = 0; i < NE * NM; i++) diff += o8[i] != o5[i];
    printf("bits: %d of %d outputs differ\n", diff, NE * NM);
    for (int rep = 0; rep < 2; rep++) {
        const float t8 = graph_best_ms(s, [&] { for (int l = 0; l < NL; l++) run8(l % NREG); }, 1, 5);
        const float t5 = graph_best_ms(s, [&] { for (int l = 0; l < NL; l++) run5(l % NREG); }, 1, 5);
        printf("per launch: q8 %.2f us (%.2f TB/s), q5p %.2f us (%.2f TB/s), q5p/q8 %.3f\n", 1e3f * t8 / NL,
               r8 / (1e6 * t8 / NL) / 1e3, 1e3f * t5 / NL, r5 / (1e6 * t5 / NL) / 1e3, t5 / t8);
    }
    return diff != 0;
}
