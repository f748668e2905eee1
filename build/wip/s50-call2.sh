#!/bin/sh
# s50-call2.sh (session 50): the landed candidate: mmv_multi_q4_0/_q4_1 (Q4_0/Q5_0 and
# Q4_1/Q5_1 projections of one row in one launch), mmv_multi_q2_k and _q3_k one type each
# (call 1's one kernel for both took 96 registers and cost Q2_K 3%), LO50_D 2 (two steps
# of the 32-value types in flight), mmv_route_q5_k (V2-Lite Q5_K_M's routing fused into
# its routed gate/up). Variants of matmul.ptx: -DMV1_MINB=4 (Q4_0's kernels at 128
# registers, four blocks an SM, against 168 and three) and -DLO23_D=2.
# Local steps: `sh build/wip/s48-prep.sh 1`; carry bin/dev, bin/base; after:
# `sh build/wip/s48-prep.sh restore`; the PTX from $OUT/ptx.tar.xz if it lands.
set -u
export MODELS="q40 q41 q3 q2 v5"
. build/gpu-setup.sh "${OUT:-/tmp/s50c2}"
ptx_all /tmp/px
for v in "m4 -DMV1_MINB=4" "d23 -DLO23_D=2"; do
	set -- $v
	rm -rf /tmp/px-$1 && cp -r /tmp/px /tmp/px-$1 && sh build/ptx-one.sh /tmp/px-$1 matmul $2 2>/dev/null || el "variant $1 failed"
done
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMatVecBatch1|DenseEvict|KernelNamesExist|EmbeddedKernelsWait|RunKernelWeights|IDW|MMVQueue|MatMulShared|MV1xQueue|FusedDecoderLayers|TestMoERouting|TopK' 300
tgroup 1 'TestConformance$' 300
model_tests 300
wait
el "tests done"
unset EMBER_CUDA_PTX_DIR
base_bin
N="EMBER_CUDA_PTX_DIR=/tmp/px $E"
b() { d=$1 m=$2; shift 2; q env EMBER_CUDA_PTX_DIR=$d "$@" $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf; }
for r in 1 2; do
	for m in q40 q41; do
		el "$m tg128 base / new / minb4: $(q $B bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf) / $(b /tmp/px $m) / $(b /tmp/px-m4 $m)"
	done
	for m in q3 q2; do
		el "$m tg128 base / new / lo23: $(q $B bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf) / $(b /tmp/px $m) / $(b /tmp/px-d23 $m)"
	done
done
for r in 1 2 3; do
	el "v5 tg128 base / new / new unfused: $(q $B bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/v5.gguf) / $(b /tmp/px v5) / $(b /tmp/px v5 EMBER_CUDA_ROUTE_FUSE=0)"
done
