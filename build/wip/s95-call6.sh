# s95-call6.sh (session 95): call 5's code-layout question at the engine's sizes: the O
# products on mmv_q4_k_1pad with 500, 1,000 and 2,000 never-run instructions after the
# product's code (PAD=4, 5, 6: 1,768, 2,272 and 3,272 SASS instructions, the first load
# at 0x3b0 as PAD=1's) against mmv_q4_k_1 (PAD=0, 1,264) and PAD=1 (6,000). nvcc only.
set -u
cd build/micro
lg() { echo "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader)"
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/mvq mvq.cu 2>&1 | grep -iE "error|warning"
r() { lg "== $*"; env "$@" timeout 60 /tmp/mvq 2>&1 | grep "^round" | tee -a "$OUT/log.txt"; }
for p in 0 4 5 6 1 0 6 5 4; do r GAP=3000 FW=0 MV1=31 PAD=$p ROUNDS=2; done
