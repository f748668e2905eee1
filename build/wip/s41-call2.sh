#!/bin/sh
# s41-call2.sh: griddepcontrol.launch_dependents before griddepcontrol.wait ("early
# trigger"): a kernel then lets the next one launch as soon as all its blocks run, so a
# mat-vec two launches on can take the SMs a mat-vec's tail frees and load its first
# weights across the small kernel between them. Every module's PTX made with common.cuh's
# pdl_wait so swapped (/tmp/pe, returned as $OUT/ptx.tar.xz); build/micro/mvp.cu's chain
# both ways; mvr with NOCOMP=2 (no activation row either); then the feeder and engine
# CUDA tests on the swapped PTX and 8B Q4_K_M tg128 alternating embedded / swapped.
# bin/dev: ember, TESTS="cuda engine" (carried without testdata/golden, vocab, tokenizers).
set -u
export MODELS="q4 q8 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s41c2}"
swap() { perl -0pi -e 's/(asm volatile\("griddepcontrol\.wait;" ::: "memory"\);)(\s*)(asm volatile\("griddepcontrol\.launch_dependents;" ::: "memory"\);)/$3$2$1/g' "$@"; }
rm -rf /tmp/pe && mkdir -p /tmp/pe && cp kernels/cuda/*.cu kernels/cuda/*.cuh /tmp/pe/
swap /tmp/pe/common.cuh
grep -A1 'launch_dependents' /tmp/pe/common.cuh | head -2
for m in $(cd /tmp/pe && ls *.cu | sed 's/\.cu$//'); do
	(sh build/ptx-one.sh /tmp/pe "$m" 2>"/tmp/pe/$m.log" || el "$m FAILED") &
done
# the micro, both ways (its own copy of the tree)
rm -rf /tmp/mm && mkdir -p /tmp/mm/build /tmp/mm/kernels && cp -r build/micro /tmp/mm/build/ && cp -r kernels/cuda /tmp/mm/kernels/
swap /tmp/mm/kernels/cuda/common.cuh /tmp/mm/build/micro/micro.cuh
F="-gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false"
(cd build/micro && nvcc $F -o /tmp/mvp mvp.cu 2>&1 | grep -i error) &
(cd /tmp/mm/build/micro && nvcc $F -o /tmp/mvpe mvp.cu 2>&1 | grep -i error) &
wait
(cd /tmp/pe && tar cJf "$L/ptx.tar.xz" *.ptx)
el "ptx and micro built: $(ls /tmp/pe/*.ptx | wc -l) modules"
for g in 0 1500; do
	for r in 1 2; do
		el "GAP $g base: $(GAP=$g S=6 SB=26880 REPACK=1 /tmp/mvp | tail -1)"
		el "GAP $g early: $(GAP=$g S=6 SB=26880 REPACK=1 /tmp/mvpe | tail -1)"
	done
done
el "nocomp 2: $(GAP=0 S=6 SB=26880 REPACK=1 NOCOMP=2 /tmp/mvp | tail -1)"
el "nocomp 2 nonorm: $(GAP=0 S=6 SB=26880 REPACK=1 NOCOMP=2 NONORM=1 /tmp/mvp | tail -1)"
el "nocomp 1 nonorm: $(GAP=0 S=6 SB=26880 REPACK=1 NOCOMP=1 NONORM=1 /tmp/mvp | tail -1)"
wait
export EMBER_CUDA_PTX_DIR=/tmp/pe
tgroup 1 'Conformance|Fused|Attention' 240
sample_tests 240
wait
cat /tmp/g1.log | grep -E -- '^(--- FAIL|ok|FAIL|PASS)' | head
OLD="-u EMBER_CUDA_PTX_DIR"
NEW="EMBER_CUDA_PTX_DIR=/tmp/pe"
tg() { q env $1 $E bench -backend cuda -p 0 -n 128 -r 3 -m /tmp/$2.gguf; }
for round in 1 2 3; do
	el "q4 tg128: base $(tg "$OLD" q4) early $(tg "$NEW" q4)"
done
for round in 1 2; do
	el "v2 tg128: base $(tg "$OLD" v2) early $(tg "$NEW" v2)"
	el "q8 tg128: base $(tg "$OLD" q8) early $(tg "$NEW" q8)"
done
