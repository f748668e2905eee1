# s95-call3.sh (session 95): what costs mvq's wrapper ~2 us an O with no copies (call 2:
# FW=0 MV1=27 +0.06 ms a step)? Only O in mvq_1, no copies (FW=0), its launch's dynamic
# shared memory swept by CAP (0: the activation row and the barrier only, ~5.6 KiB,
# as mv1's; 20000: ~24 KiB; 40960: ~42 KiB). nvcc only.
set -u
cd build/micro
lg() { echo "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader)"
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/mvq mvq.cu 2>&1 | grep -iE "error|warning"
r() { lg "== $*"; env "$@" timeout 60 /tmp/mvq 2>&1 | grep "^round" | tee -a "$OUT/log.txt"; }
for c in 0 20000 40960; do r GAP=3000 FW=0 MV1=27 CAP=$c; done
r GAP=3000 FW=0 MV1=0 CAP=0
