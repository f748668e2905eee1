#!/bin/sh
# s50-call3.sh (session 50): the final sources' PTX (every module, $OUT/ptx.tar.xz) and
# their tests, then tg128 of the committed build (bin/base) against them: 8B Q4_0, Q4_1
# (mmv_multi_q4_0/_q4_1, two steps in flight, four blocks an SM), Q3_K_M and Q2_K (no
# multi kernel: their kernels as committed, on lo_run), V2-Lite Q5_K_M (mmv_route_q5_k,
# the routed Q5_1 downs at one step in flight) and Q4_K_M, the 8B Q4_K_M (unchanged).
# Local steps: `sh build/wip/s48-prep.sh 1`; carry bin/dev, bin/base; after:
# `sh build/wip/s48-prep.sh restore`, the PTX from $OUT/ptx.tar.xz into kernels/cuda.
set -u
export MODELS="q40 q41 q3 q2 v5 v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s50c3}"
ptx_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMatVecBatch1|DenseEvict|KernelNamesExist|EmbeddedKernelsWait|RunKernelWeights|IDW|MMVQueue|MatMulShared|MV1xQueue|FusedDecoderLayers|TestMoERouting|TopK' 300
tgroup 1 'TestConformance$' 300
model_tests 300
wait
el "tests done"
grep -E -B2 -A8 -- '--- FAIL' /tmp/g0.log | head -40
unset EMBER_CUDA_PTX_DIR
base_bin
b() { d=$1 m=$2; shift 2; q env EMBER_CUDA_PTX_DIR=$d "$@" $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf; }
for r in 1 2; do
	for m in q40 q41 q3 q2 v5 v2; do
		el "$m tg128 base / new: $(q $B bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf) / $(b /tmp/px $m)"
	done
done
el "v5 unfused: $(b /tmp/px v5 EMBER_CUDA_ROUTE_FUSE=0) / fused $(b /tmp/px v5)"
el "q4 tg128 base / new: $(q $B bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/q4.gguf) / $(b /tmp/px q4)"
