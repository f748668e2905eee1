# s95-call5.sh (session 95): does a kernel's code layout cost time at each launch in the
# chain? build/micro/mvq.cu's engine chain with its 32 O products on mmv_q4_k_1pad: PAD=1
# 6,000 never-run instructions after the product's code (7,272 SASS instructions in all
# against mmv_q4_k_1's 1,264, the first load at 0x3b0), PAD=2 6,000 before it (the first
# load at 0x17b10), PAD=3 2,000 before it (0x8110); PAD=0 the engine's. The engine chain
# column is the one to compare across runs (calls 1-4: ~0.005 ms apart). nvcc only.
set -u
cd build/micro
lg() { echo "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader)"
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/mvq mvq.cu 2>&1 | grep -iE "error|warning"
r() { lg "== $*"; env "$@" timeout 60 /tmp/mvq 2>&1 | grep "^round" | tee -a "$OUT/log.txt"; }
for p in 0 1 2 3 0 2 1; do r GAP=3000 FW=0 MV1=31 PAD=$p; done
