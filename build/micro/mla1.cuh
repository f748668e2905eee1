// mla1.cuh: DeepSeek-V2-Lite's batch-1 attention half in one launch (for build/micro/mla1.cu):
// Q and the latent KV row (kv_a_mqa), the latent norm and both RoPEs, the new cache row,
// the absorbed query (attn_k_b), the attention over the latent cache, attn_v_b and the
// output projection's partial sums. Include after matmul.cu and ops.cu (mv1.cuh's Q4_K
// lanes, q8k_quant_warp, rope_table) and micro.cuh.
//
// Why: the engine's chain for it (s59's timeline) is ~19.4 us a layer (norm 3.0, q_nope
// 2.8, quant_q8 1.1, attn_k_b 2.7, attention_short576 5.1, attn_v_b 1.8, quant_q8_k 1.7,
// O 1.7, with kv_a, k_pe, q_pe and mla_kv_rope on a side branch) for ~9 MB of weights
// (~2.5 us of HBM). Here every block loads all its weights (k_b's, v_b's and O's rows in
// registers) before its first wait, and the waits are three meetings on counters: all
// blocks once (the latent row's norm needs all 512 values), then the 16 blocks of a head
// pair twice (the absorbed query, then v_b's outputs).
//
// Shapes: rows of 2,048; 16 heads of 128 + 64 query dims (no q_lora); a latent row of 512
// + 64 rope dims; v heads of 128. Weights as a Q4_K_M file has them (ember synth's
// V2-Lite): Q and kv_a Q4_K; k_b Q5_0, which the engine keeps as Q8_0 ([16][512][128]
// here in planar rows: 128 quants, then the 4 f16 d, MLA_KBS bytes a row); v_b Q4_K
// [16][128][512]; O Q4_K [2048][2048]. Cache: F16 rows of 576 (512 latent, then
// the rotated 64), flat (position t is row t), at most MLA_NMAX positions.
//
// Grid: 8 head pairs x 16 blocks of 256 threads. Block b = 16 pr + r:
//   1. Q rows 384 pr + 24 r .. + 24 (six tasks of four), kv_a tasks b and b + 128 (< 144):
//      one step of eight Q4_K blocks a row (mv1's lanes) -> qg, kvg. Then the block's k_b,
//      v_b and O rows into registers.
//   2. Meet all 128 blocks (cnt[0]).
//   3. Every block: the latent row's RMS norm (double sums) times kvn, k_pe and the pair's
//      q_pe rotated (adjacent pairs), both rounded to F16 as the cache holds them (block 0
//      writes the cache row), the pair's q_nope rounded to Q8_0.
//   4. q_lat: the head's (r / 8) k_b rows 64 (r % 8) .. + 64 against its q_nope -> qlg.
//   5. Meet the pair's blocks (cnt[1 + pr]); the attention of both heads over 0 .. pos (4
//      threads a position for the scores, 2 latent dims a thread for P V), redundantly in
//      each block.
//   6. v_b: the head's o_lat rounded to Q8_K, its rows 16 (r % 8) .. + 16 -> vbg.
//   7. Meet the pair's blocks (cnt[9 + pr]); the pair's 256 v_b outputs rounded to Q8_K;
//      O's rows 128 r .. + 128 over the pair's 256 columns -> P[pr]; the last of a row
//      range's 8 blocks (cnt[17 + r]) adds the 8 partials in pair order into dst.
#pragma once

#define MLA_E 2048
#define MLA_NH 16
#define MLA_QH 192  // a head's query rows: 128 nope, then 64 rope
#define MLA_DL 512
#define MLA_DR 64
#define MLA_KV 576
#define MLA_NMAX 256
#define MLA_KBS 144  // a k_b row: 128 quants, 4 d, padded to 16
#define MLA_XB (Q8K_BSUMS(MLA_E) + 4 * (MLA_E / 16))

// mla_q8_0 rounds the warp's 32 values (one a lane) to a Q8_0 block: its quant (returned)
// and d (*d), as the host's reference does.
__device__ __forceinline__ int mla_q8_0(float v, float* d) {
    float a = fabsf(v);
    for (int o = 16; o > 0; o >>= 1) a = fmaxf(a, __shfl_xor_sync(0xffffffffu, a, o));
    const float dd = a / 127.0f, id = dd != 0.0f ? 1.0f / dd : 0.0f;
    *d = dd;
    return (int)rintf(v * id);
}

#define MLA1_ARGS                                                                                                         \
    const uint8_t *X, const uint8_t *Wq, const uint8_t *Wkva, const float *kvn, const uint8_t *Wkb, const uint8_t *Wvb,  \
        const uint8_t *Wo, uint16_t *kc, const int *pos, float theta_scale, float scale, float eps, float *qg, float *kvg, \
        float *qlg, float *vbg, float *P, float *dst, unsigned *cnt

extern "C" __global__ void __launch_bounds__(256, 1) mla1(MLA1_ARGS) {
    constexpr int QRS = MLA_E / 256 * 144;  // a Q4_K row's bytes
    __shared__ __align__(16) uint8_t xs[MLA_XB];
    __shared__ float cs[MLA_DR], lat[MLA_DL], kpe[MLA_DR], qpe[2][MLA_DR], qlat[2][MLA_DL], ol[2][MLA_DL];
    __shared__ __align__(16) int8_t qn8[2][128];
    __shared__ float qn8d[2][4], ps[2][MLA_NMAX], rr[8];
    __shared__ __align__(16) uint8_t olq[Q8K_BSUMS(MLA_DL) + 4 * (MLA_DL / 16)];  // the head's o_lat in Q8_K
    __shared__ double rd[8];
    __shared__ __align__(16) uint8_t xa[Q8K_BSUMS(256) + 64];
    __shared__ int last;
    const int b = blockIdx.x, pr = b / 16, r = b % 16, hh = r / 8;
    const int lane = threadIdx.x & 31, wp = threadIdx.x >> 5, c4 = lane & 3, ib = lane >> 2;
    const int p = pos[0], n = p + 1;
    // 1. Q and kv_a rows: warp w < 6 a Q task, warp 6 kv_a task b, warp 7 kv_a task b + 128
    const bool has = wp < 6 || wp == 6 || b + 128 < MLA_KV / 4;
    const int row0 = wp < 6 ? 384 * pr + 24 * r + 4 * wp : 4 * (wp == 6 ? b : b + 128);
    const uint8_t* W = wp < 6 ? Wq : Wkva;
    uint4 h[4], qa[4], qb[4];
    if (has) {
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const uint8_t* q = W + (i64)(row0 + i) * QRS + 144 * ib;
            h[i] = ldw16<false>(q), qa[i] = ldw16<false>(q + 16 + 32 * c4), qb[i] = ldw16<false>(q + 32 + 32 * c4);
        }
    }
    // the later phases' weights: k_b row 64 (r % 8) + t / 4 of head 2 pr + hh (block t % 4),
    // v_b row 16 (r % 8) + t / 8 of that head (t < 128; Q4_K block t % 8 / 4, chunk t % 4),
    // O rows 128 r + t / 4 and + 64
    const int hd = 2 * pr + hh;
    const uint8_t* kb = Wkb + ((i64)hd * MLA_DL + 64 * (r % 8) + (threadIdx.x >> 2)) * MLA_KBS;
    const uint4 kb0 = ldw16<false>(kb + 32 * c4), kb1 = ldw16<false>(kb + 32 * c4 + 16);
    const uint16_t kbd = ldw2<false>(kb + 128 + 2 * c4);
    const int vsb = (threadIdx.x >> 2) & 1;
    uint4 vh = make_uint4(0, 0, 0, 0), va = vh, vq = vh;
    if (threadIdx.x < 128) {
        const uint8_t* q = Wvb + ((i64)hd * 128 + 16 * (r % 8) + (threadIdx.x >> 3)) * (2 * 144) + 144 * vsb;
        vh = ldw16<false>(q), va = ldw16<false>(q + 16 + 32 * c4), vq = ldw16<false>(q + 32 + 32 * c4);
    }
    uint4 oh[2], oa[2], ob[2];
#pragma unroll
    for (int k = 0; k < 2; k++) {
        const uint8_t* q = Wo + (i64)(128 * r + 64 * k + (threadIdx.x >> 2)) * QRS + 144 * pr;
        oh[k] = ldw16<false>(q), oa[k] = ldw16<false>(q + 16 + 32 * c4), ob[k] = ldw16<false>(q + 32 + 32 * c4);
    }
    rope_table(cs, p, MLA_DR / 2, theta_scale, 1.0f, nullptr, 0.0f, 0.0f, 0.0f, 1.0f);
    pdl_wait();
    mv1_stage(xs, X, MLA_XB, MLA_E, 0);
    mv1_wait();
    if (has) {
        int xv[16];
        float yd;
        int4 bs;
        q4k_x(xs, MLA_E, ib, c4, true, xv, &yd, &bs);
        float* o = wp < 6 ? qg : kvg;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            int sb;
            const int sa = q4k_dot(qa[i], qb[i], xv, &sb);
            const float v = warp_sum(0.0f + q4k_part(h[i], c4, sa, sb, yd, bs));
            if (lane == 0) o[row0 + i] = v;
        }
    }
    // 2. all blocks meet: the latent row and every query row are written
    count_meet(cnt, gridDim.x);
    // 3. the latent norm, the rotations, the new cache row, the pair's q_nope in Q8_0
    double ss = 0;
    for (int j = threadIdx.x; j < MLA_DL; j += 256) {
        const float v = __ldcg(kvg + j);
        lat[j] = v;
        ss += (double)v * (double)v;
    }
    for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
    if (lane == 0) rd[wp] = ss;
    __syncthreads();
    double st = 0;
    for (int i = 0; i < 8; i++) st += rd[i];
    const float sc = (float)(1.0 / sqrt(st / MLA_DL + (double)eps));
    for (int j = threadIdx.x; j < MLA_DL; j += 256) lat[j] = h2f(f2h(lat[j] * sc * kvn[j]));
    if (threadIdx.x < 3 * MLA_DR / 2) {  // k_pe's 32 pairs, then each head's q_pe's
        const int k = threadIdx.x % (MLA_DR / 2), which = threadIdx.x / (MLA_DR / 2);
        const float* src = which == 0 ? kvg + MLA_DL : qg + (i64)(2 * pr + which - 1) * MLA_QH + 128;
        const float x0 = __ldcg(src + 2 * k), x1 = __ldcg(src + 2 * k + 1), co = cs[2 * k], sn = cs[2 * k + 1];
        const float y0 = x0 * co - x1 * sn, y1 = x0 * sn + x1 * co;
        if (which == 0) kpe[2 * k] = h2f(f2h(y0)), kpe[2 * k + 1] = h2f(f2h(y1));
        else qpe[which - 1][2 * k] = y0, qpe[which - 1][2 * k + 1] = y1;
    }
    {  // warp w: head w / 4's q_nope block w % 4
        const int hq = wp / 4, bk = wp % 4;
        float d;
        const int q = mla_q8_0(__ldcg(qg + (i64)(2 * pr + hq) * MLA_QH + 32 * bk + lane), &d);
        qn8[hq][32 * bk + lane] = (int8_t)q;
        if (lane == 0) qn8d[hq][bk] = d;
    }
    __syncthreads();
    if (b == 0) {
        for (int j = threadIdx.x; j < MLA_KV; j += 256) kc[(i64)p * MLA_KV + j] = f2h(j < MLA_DL ? lat[j] : kpe[j - MLA_DL]);
    }
    // 4. q_lat: k_b's rows of the block against its head's q_nope
    {
        const int4 x0 = *(const int4*)(qn8[hh] + 32 * c4), x1 = *(const int4*)(qn8[hh] + 32 * c4 + 16);
        int s = __dp4a((int)kb0.x, x0.x, __dp4a((int)kb0.y, x0.y, __dp4a((int)kb0.z, x0.z, __dp4a((int)kb0.w, x0.w, 0))));
        s = __dp4a((int)kb1.x, x1.x, __dp4a((int)kb1.y, x1.y, __dp4a((int)kb1.z, x1.z, __dp4a((int)kb1.w, x1.w, s))));
        float v = (float)s * (h2f(kbd) * qn8d[hh][c4]);
        v += __shfl_xor_sync(0xffffffffu, v, 1);
        v += __shfl_xor_sync(0xffffffffu, v, 2);
        if (c4 == 0) qlg[(i64)pr * 2 * MLA_DL + hh * MLA_DL + 64 * (r % 8) + (threadIdx.x >> 2)] = v;
    }
    // 5. the pair meets; the attention of both heads over the latent cache
    count_meet(cnt + 1 + pr, 16);
    for (int j = threadIdx.x; j < 2 * MLA_DL; j += 256) qlat[j / MLA_DL][j % MLA_DL] = __ldcg(qlg + (i64)pr * 2 * MLA_DL + j);
    __syncthreads();
    const int part = threadIdx.x & 3;
    for (int t0 = 0; t0 < n; t0 += 64) {  // scores: four threads a position, 144 dims each
        const int t = t0 + (threadIdx.x >> 2);
        float a = 0, bb = 0;
        if (t < n) {
            const uint16_t* row = kc + (i64)t * MLA_KV;
#pragma unroll 2
            for (int d8 = 0; d8 < 18; d8++) {
                const int d = 144 * part + 8 * d8;
                float kv[8];
                if (t == p) {
#pragma unroll
                    for (int e = 0; e < 8; e++) kv[e] = d + e < MLA_DL ? lat[d + e] : kpe[d + e - MLA_DL];
                } else {
                    const uint4 u = __ldcg((const uint4*)(row + d));
                    const uint32_t w4[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
                    for (int e = 0; e < 4; e++) kv[2 * e] = h2f(w4[e] & 0xffff), kv[2 * e + 1] = h2f(w4[e] >> 16);
                }
#pragma unroll
                for (int e = 0; e < 8; e++) {
                    const float qA = d + e < MLA_DL ? qlat[0][d + e] : qpe[0][d + e - MLA_DL];
                    const float qB = d + e < MLA_DL ? qlat[1][d + e] : qpe[1][d + e - MLA_DL];
                    a += qA * kv[e], bb += qB * kv[e];
                }
            }
        }
        a += __shfl_xor_sync(0xffffffffu, a, 1), bb += __shfl_xor_sync(0xffffffffu, bb, 1);
        a += __shfl_xor_sync(0xffffffffu, a, 2), bb += __shfl_xor_sync(0xffffffffu, bb, 2);
        if (t < n && part == 0) ps[0][t] = a * scale, ps[1][t] = bb * scale;
    }
    __syncthreads();
    float mA = -INFINITY, mB = -INFINITY;
    for (int t = threadIdx.x; t < n; t += 256) mA = fmaxf(mA, ps[0][t]), mB = fmaxf(mB, ps[1][t]);
    mA = block_max(mA, rr), mB = block_max(mB, rr);
    float lA = 0, lB = 0;
    for (int t = threadIdx.x; t < n; t += 256) {
        const float eA = expf(ps[0][t] - mA), eB = expf(ps[1][t] - mB);
        ps[0][t] = eA, ps[1][t] = eB, lA += eA, lB += eB;
    }
    lA = block_sum(lA, rr), lB = block_sum(lB, rr);
    {  // P V: latent dims 2 t and 2 t + 1 of both heads
        float a0 = 0, a1 = 0, b0 = 0, b1 = 0;
        const int j = 2 * threadIdx.x;
        for (int t = 0; t < n; t++) {
            float v0, v1;
            if (t == p) {
                v0 = lat[j], v1 = lat[j + 1];
            } else {
                const uint32_t u = __ldcg((const unsigned*)(kc + (i64)t * MLA_KV + j));
                v0 = h2f(u & 0xffff), v1 = h2f(u >> 16);
            }
            const float pA = ps[0][t], pB = ps[1][t];
            a0 += pA * v0, a1 += pA * v1, b0 += pB * v0, b1 += pB * v1;
        }
        ol[0][j] = a0 / lA, ol[0][j + 1] = a1 / lA, ol[1][j] = b0 / lB, ol[1][j + 1] = b1 / lB;
    }
    __syncthreads();
    // 6. v_b: the head's o_lat in Q8_K (warps 0 and 1: its two blocks), then its rows
    if (wp < 2) {
        float v[8];
#pragma unroll
        for (int i = 0; i < 8; i++) v[i] = ol[hh][256 * wp + 8 * lane + i];
        q8k_quant_warp(v, olq, wp, MLA_DL);
    }
    __syncthreads();
    if (threadIdx.x < 128) {  // eight lanes a row: two Q4_K blocks of four chunks
        int xv[16];
        float yd;
        int4 bs;
        q4k_x(olq, MLA_DL, vsb, c4, false, xv, &yd, &bs);
        int sb;
        const int sa = q4k_dot(va, vq, xv, &sb);
        float v = q4k_part(vh, c4, sa, sb, yd, bs);
        v += __shfl_xor_sync(0xffffffffu, v, 1);
        v += __shfl_xor_sync(0xffffffffu, v, 2);
        v += __shfl_xor_sync(0xffffffffu, v, 4);
        if ((threadIdx.x & 7) == 0) vbg[(i64)pr * 256 + hh * 128 + 16 * (r % 8) + (threadIdx.x >> 3)] = v;
    }
    // 7. the pair meets; its v_b outputs in Q8_K; O's partial sums; the last block adds
    count_meet(cnt + 9 + pr, 16);
    if (wp == 0) {
        float v[8];
#pragma unroll
        for (int i = 0; i < 8; i++) v[i] = __ldcg(vbg + (i64)pr * 256 + 8 * lane + i);
        q8k_quant_warp(v, xa, 0, 256);
    }
    __syncthreads();
    {
        int xv[16];
        float yd;
        int4 bs;
        q4k_x(xa, 256, 0, c4, false, xv, &yd, &bs);
#pragma unroll
        for (int k = 0; k < 2; k++) {
            int s2;
            const int s1 = q4k_dot(oa[k], ob[k], xv, &s2);
            float v = q4k_part(oh[k], c4, s1, s2, yd, bs);
            v += __shfl_xor_sync(0xffffffffu, v, 1);
            v += __shfl_xor_sync(0xffffffffu, v, 2);
            if (c4 == 0) P[(i64)pr * MLA_E + 128 * r + 64 * k + (threadIdx.x >> 2)] = v;
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned old;
        asm volatile("fence.acq_rel.gpu;" ::: "memory");
        asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(cnt + 17 + r) : "memory");
        last = old % 8 == 7;
        if (last) asm volatile("fence.acq_rel.gpu;" ::: "memory");
    }
    __syncthreads();
    if (last && threadIdx.x < 128) {
        const int row = 128 * r + threadIdx.x;
        float v = __ldcg(P + row);
#pragma unroll
        for (int k = 1; k < 8; k++) v += __ldcg(P + (i64)k * MLA_E + row);
        dst[row] = v;
    }
}
