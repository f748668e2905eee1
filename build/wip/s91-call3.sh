# s91-call3.sh (session 91): build/micro/mvx.cuh (NORM=11: producers count with
# red.release, the consumers wait on the counts and do the norm's and SwiGLU's tails)
# against the engine's chain, gaps 0 and 3000 ns. nvcc only; ~2 minutes.
set -u
L=$OUT
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader | tee -a "$L/log.txt"
# /tmp/kc: kernels/cuda with build/micro/kc-pdl.cuh's pdl_wait in place of common.cuh's
rm -rf /tmp/kc && cp -r kernels/cuda /tmp/kc && rm -f /tmp/kc/*.ptx &&
	sed -i '/^__device__ __forceinline__ void pdl_wait() {$/,/^}$/{/^}$/r build/micro/kc-pdl.cuh
d}' /tmp/kc/common.cuh && grep -q mvx_wait /tmp/kc/common.cuh || echo "KC PATCH FAILED" | tee -a "$L/log.txt"
(cd build/micro && nvcc -DMVX -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/mvx mvp.cu 2>&1 | grep -i error)
for g in 0 3000; do
	NORM=11 GAP=$g timeout 150 /tmp/mvx 2>&1 | tee -a "$L/log.txt"
done
