// kc-pdl.cuh (session 91): pdl_wait for /tmp/kc/common.cuh (build/wip/s91-call3.sh puts it
// in place of common.cuh's own): mvx_wait (mvx.cuh) where a block's dynamic shared memory
// size has bit 3 set, else griddepcontrol.wait as before.
__device__ void mvx_wait(unsigned n);
__device__ __forceinline__ void pdl_wait() {
    unsigned n;
    asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(n));
    if (n & 8) mvx_wait(n);
    else asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}
