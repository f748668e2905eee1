// mbar.cuh: shared-memory mbarriers and the bulk copies (sm_90's copy engine) that
// complete on them, for kernels that stream rows or tiles into shared memory: mvs.cu's
// weight ring, attention_short.cu's latent rows (and build/micro's kvcopy.cu and
// ring.cu). Addresses are shared-window addresses (__cvta_generic_to_shared). mmg.cu
// keeps its own forms (a wait whose loop is inside the asm, arrivals into the sink):
// their PTX and timing were measured as they are.
#pragma once
#include <stdint.h>

// mbar_init makes the barrier at a expect n arrivals a phase.
__device__ __forceinline__ void mbar_init(uint32_t a, int n) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(a), "r"(n) : "memory");
}
// mbar_fence_init makes this thread's barrier initialisations visible to the copy engine
// (and the block, after a __syncthreads) before any copy counts on them.
__device__ __forceinline__ void mbar_fence_init() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
// mbar_expect arrives on the barrier at a, announcing bytes still to come.
__device__ __forceinline__ void mbar_expect(uint32_t a, uint32_t bytes) {
    asm volatile("{ .reg .b64 st; mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1; }" ::"r"(a), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t a) {
    asm volatile("{ .reg .b64 st; mbarrier.arrive.shared::cta.b64 st, [%0]; }" ::"r"(a) : "memory");
}
// mbar_wait returns once the barrier at a has completed the phase of the given parity.
__device__ __forceinline__ void mbar_wait(uint32_t a, uint32_t parity) {
    uint32_t ok;
    do {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(ok) : "r"(a), "r"(parity) : "memory");
    } while (!ok);
}
// bulk_g2s copies bytes (a multiple of 16; both addresses 16-byte aligned) from global
// src to shared dst and counts them on barrier bar.
__device__ __forceinline__ void bulk_g2s(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
}
