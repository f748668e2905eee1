# s95-call4.sh (session 95): is mvq's wrapper cost (FW=0, no copies: +0.63-0.75 ms a
# step in calls 1-3, whatever the launch's shared memory or carveout) the kernels'
# 200 KiB dynamic shared-memory limit (cudaFuncAttributeMaxDynamicSharedMemorySize)
# rather than what a launch asks? The micro with SMAX=0 (the default 48 KiB limit; the
# downs stay on mv1, MV1=1, as their 55-58 KiB do not fit it), then the engine
# (build/wip/mvq-engine.patch with the limit raised only as far as a launch asks):
# MVQ=20000 (every launch under 48 KiB: no limit raised) and MVQ=1 against off.
# Needs bin/dev (TESTS=cuda) of that build and the plain hold-out.
set -u
MODELS="q4 v2" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
(cd build/micro && nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/mvq mvq.cu 2>&1 | grep -iE "error|warning") | tee -a "$OUT/log.txt"
lg "micro built"
r() { lg "== $*"; env "$@" timeout 60 /tmp/mvq 2>&1 | grep -v "^NVIDIA" | tee -a "$OUT/log.txt"; }
r GAP=3000 FW=0 MV1=1
r GAP=3000 FW=0 MV1=1 SMAX=0
r GAP=3000 FW=396 MV1=1 SMAX=0
r GAP=3000 MV1=1 SMAX=0
r GAP=3000 FW=0 MV1=27 SMAX=0
r GAP=3000 FW=396 MV1=27 SMAX=0
r GAP=3000 FW=396 MV1=1 SMAX=49152
r GAP=3000 FW=396 MV1=1 SMAX=0 STAMP=1 ROUNDS=1
lg "micro done"
wait # the models
for m in 0 20000; do
	EMBER_CUDA_MVQ=$m timeout -s KILL 60 "$E" run -m /tmp/q4.gguf -backend cuda -p "Once upon a time" -n 48 >/tmp/run$m.txt 2>&1
	lg "8B greedy MVQ=$m: $(md5sum </tmp/run$m.txt | cut -c1-12)"
done
sweep 3 q4 "$E" "EMBER_CUDA_MVQ=20000 $E" "EMBER_CUDA_MVQ=1 $E" 2>&1 | tee -a "$OUT/log.txt"
sweep 2 v2 "$E" "EMBER_CUDA_MVQ=20000 $E" 2>&1 | tee -a "$OUT/log.txt"
lg done
