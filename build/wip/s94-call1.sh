# s94-call1.sh (session 94): build/micro/mvq.cu, the products' whole weight shares copied
# into shared memory before griddepcontrol.wait, against the engine's mat-vecs in the
# same chain (norms, SwiGLU, a GAP-ns kernel where RoPE and the attention run). Needs
# only nvcc: hold the tree out (build/wip/hold.sh out) and carry nothing. ~2 minutes.
set -u
cd build/micro
lg() { echo "$*" | tee -a "$OUT/log.txt"; }
lg "$(date -u +%T) $(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/mvq mvq.cu 2>&1 | grep -iE "error|warning" | tee -a "$OUT/log.txt"
lg "$(date -u +%T) built"
r() { lg "== $*"; env "$@" timeout 120 /tmp/mvq 2>&1 | tee -a "$OUT/log.txt"; }
r GAP=3000
r GAP=0
r GAP=3000 CARVE=100
r GAP=3000 CARVE=50
# one product kind at a time on mvq (MV1: 1 downs, 2 head, 4 O, 8 Q/K/V, 16 gate/up stay on mv1)
r GAP=3000 MV1=23
r GAP=3000 MV1=27
r GAP=3000 MV1=15
r GAP=3000 MV1=30
r GAP=3000 MV1=29
r GAP=3000 CAP=0
r GAP=3000 CAP=98304
lg "$(date -u +%T) done"
