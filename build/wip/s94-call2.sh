# s94-call2.sh (session 94): mvq.cu again after call 1 (s94-call1.sh: +0.8-0.95 ms, and
# as slow with no copies at all): shared loads as ld.shared and global ones as ld.global
# (call 1's select made every load generic), and FW: only the first wave's blocks copy
# (the rest take mv1's own path); STAMP=1: layer 5's O blocks' global-timer stamps (start,
# wait returned, copies landed, end) against the attention stand-in's, on mvq and on
# mv1's path, to see whether the blocks are resident and their copies land inside the
# window. Not run in session 94 (no machine started after call 1). Hold the tree out;
# ~2 minutes.
set -u
cd build/micro
lg() { echo "$*" | tee -a "$OUT/log.txt"; }
lg "$(date -u +%T) $(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/mvq mvq.cu 2>&1 | grep -iE "error|warning" | tee -a "$OUT/log.txt"
lg "$(date -u +%T) built"
r() { lg "== $*"; env "$@" timeout 120 /tmp/mvq 2>&1 | tee -a "$OUT/log.txt"; }
r GAP=3000
r GAP=3000 FW=396
r GAP=3000 FW=0
r GAP=0 FW=396
r GAP=0
r GAP=3000 MV1=27
r GAP=3000 MV1=23
r GAP=3000 MV1=15 FW=396
r GAP=3000 MV1=30 FW=396
r GAP=3000 CARVE=50 FW=396
r GAP=3000 STAMP=1 ROUNDS=1
r GAP=10000 STAMP=1 MV1=27
lg "$(date -u +%T) done"
