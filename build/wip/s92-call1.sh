# s92-call1.sh (session 92): (1) attention.cu's attention_smem scoring through
# split_scores (the duplicate left since session 89): every module's PTX (ptx.tar.xz), the
# sm_90 cubins (sm90.tar.xz), and the attention and deepseek2 tests on that PTX; (2) build/micro/mvx.cuh (NORM=11) against the engine's chain,
# gaps 0 and 3000 ns (s91-call3.sh's run). Needs bin/dev (TESTS="cuda deepseek2").
set -u
MODELS=" " . build/gpu-setup.sh "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader | tee -a "$L/log.txt"
rm -rf /tmp/kc && cp -r kernels/cuda /tmp/kc && rm -f /tmp/kc/*.ptx &&
	sed -i '/^__device__ __forceinline__ void pdl_wait() {$/,/^}$/{/^}$/r build/micro/kc-pdl.cuh
d}' /tmp/kc/common.cuh && grep -q mvx_wait /tmp/kc/common.cuh || echo "KC PATCH FAILED" | tee -a "$L/log.txt"
(cd build/micro && nvcc -DMVX -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/mvx mvp.cu 2>&1 | grep -i error) &
ptx_all /tmp/px 2>&1 | tee -a "$L/log.txt"
export EMBER_CUDA_PTX_DIR=/tmp/px
cubin_all /tmp/px &
tgroup 0 'Attention' 110
(cd inference/model/deepseek2 && timeout -s KILL 110 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3 | sed 's/^/deepseek2: /') >>"$L/log.txt" &
wait
gsum tests 0
el "tests done, mvx built" | tee -a "$L/log.txt"
for g in 0 3000; do
	NORM=11 GAP=$g timeout 60 /tmp/mvx 2>&1 | tee -a "$L/log.txt"
done
el "mvx done" | tee -a "$L/log.txt"
el "all done" | tee -a "$L/log.txt"
