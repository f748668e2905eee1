# s95-call2.sh (session 95): after call 1 (mvq loses: micro FW=0, no copies, +0.75 ms a
# step; engine 8B 454.9 -> 411.8 on an H100): is the loss the shared-memory
# reconfiguration between mvq's big-smem blocks and the small kernels? The micro with
# one carveout for every kernel (CARVE=50: 128 KiB, three blocks of ~42 KiB; 66: 192
# KiB), then the engine with every kernel at one carveout
# ($EMBER_CUDA_CARVEOUT_KERNELS=all; mvq's kernels keep it in this build), MVQ off and
# on. Needs bin/dev (TESTS=cuda, the mvq branch) and the plain hold-out.
# (The engine form is build/wip/mvq-engine.patch now: apply it, with its PTX, to rerun.)
set -u
MODELS="q4 v2" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
(cd build/micro && nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/mvq mvq.cu 2>&1 | grep -iE "error|warning") | tee -a "$OUT/log.txt"
lg "micro built"
r() { lg "== $*"; env "$@" timeout 60 /tmp/mvq 2>&1 | grep -v "^NVIDIA\|outputs differ (0 NaN)" | tee -a "$OUT/log.txt"; }
r GAP=3000 CARVE=50 FW=396
r GAP=3000 CARVE=50 FW=0
r GAP=3000 CARVE=50 FW=396 MV1=27
r GAP=3000 CARVE=50 FW=396 MV1=23
r GAP=3000 CARVE=66 FW=528
r GAP=3000 CARVE=66 FW=0
r GAP=3000 CARVE=50 FW=396 STAMP=1 ROUNDS=1
r GAP=3000 FW=0 MV1=27
lg "micro done"
wait # the models
C50="EMBER_CUDA_CARVEOUT=50 EMBER_CUDA_CARVEOUT_KERNELS=all"
C66="EMBER_CUDA_CARVEOUT=66 EMBER_CUDA_CARVEOUT_KERNELS=all"
sweep 3 q4 "$E" "$C50 $E" "$C50 EMBER_CUDA_MVQ=1 $E" "$C66 $E" "$C66 EMBER_CUDA_MVQ=1 $E" 2>&1 | tee -a "$OUT/log.txt"
sweep 2 v2 "$E" "$C50 $E" "$C50 EMBER_CUDA_MVQ=1 $E" 2>&1 | tee -a "$OUT/log.txt"
lg done
