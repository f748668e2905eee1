#!/usr/bin/env python3
"""timeline-cuh.py COMMON_CUH: rewrites a copy of kernels/cuda/common.cuh for the
timeline build (build/timeline-ptx.sh; inference/backend/cuda/timeline.go): pdl_wait
(every kernel's wait for the one before) also has block (0,0,0)'s thread 0 record, in
its module's em_tl, the global timer when it reached the wait, when the wait let it go,
the grid's blocks and its %gridid (the launch's number, which orders the records as the
launches were made where branches ran side by side). The committed sources stay as
they are (their PTX hashes)."""
import sys

path = sys.argv[1]
src = open(path).read()
old = '''__device__ __forceinline__ void pdl_wait() {
#if EM_SM90
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}'''
new = '''#define EM_TL_MAX 4096
__device__ unsigned long long em_tl[4 * EM_TL_MAX];  // arrival, release, blocks, gridid
__device__ unsigned int em_tl_n;
__device__ __forceinline__ unsigned long long em_gtime() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ void pdl_wait() {
#if EM_SM90
    const unsigned long long t0 = em_gtime();
    asm volatile("griddepcontrol.wait;" ::: "memory");
    if ((blockIdx.x | blockIdx.y | blockIdx.z | threadIdx.x | threadIdx.y | threadIdx.z) == 0) {
        const unsigned long long t1 = em_gtime();
        const unsigned int s = atomicAdd(&em_tl_n, 1u);
        if (s < EM_TL_MAX) {
            unsigned long long g;
            asm volatile("mov.u64 %0, %%gridid;" : "=l"(g));
            em_tl[4 * s] = t0;
            em_tl[4 * s + 1] = t1;
            em_tl[4 * s + 2] = (unsigned long long)gridDim.x * gridDim.y * gridDim.z;
            em_tl[4 * s + 3] = g;
        }
    }
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}'''
if src.count(old) != 1:
    sys.exit("timeline-cuh.py: pdl_wait not found as expected in " + path)
open(path, "w").write(src.replace(old, new))
