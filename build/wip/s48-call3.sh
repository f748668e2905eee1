#!/bin/sh
# s48-call3.sh (session 48): the F16/BF16 and Q5_K batch-1 kernels' shapes (mv1x.cuh),
# on bin/dev built with build/wip/s48-xrows.patch (EMBER_X_HALF_ROWS, EMBER_X_Q5_ROWS:
# the host's rows a block to match the PTX tried; EMBER_X_HALF_NOSMEM: F16 rows from
# global memory). matmul.ptx made with each variant's -D flags beside the call's other
# modules; TestMatVecBatch1 on each, then tg128 of the 8B F16 and Q5_K_M, the variants
# in turn, two rounds.
set -u
export MODELS="q5 f16"
. build/gpu-setup.sh "${OUT:-/tmp/s48c3}"
ptx_all /tmp/px
mk() {
	d=/tmp/v/$1
	shift
	mkdir -p $d && cp /tmp/px/*.ptx kernels/cuda/*.cu kernels/cuda/*.cuh $d/ && sh build/ptx-one.sh $d matmul "$@" 2>/dev/null
}
mk a &
mk b -DHALF_R1=2 &
mk c -DHALF_R1=1 -DHALF_U=4 &
mk d -DHALF_R1=2 -DHALF_U=4 &
mk e -DHALF_R1=1 -DHALF_U=8 &
mk f -DHALF_R1=2 -DHALF_ACC=1 &
mk g -DHALF_R1=1 -DHALF_U=4 -DHALF_ACC=1 &
mk q1 -DQ5K_R1=1 &
mk q4 -DQ5K_R1=4 &
wait
el "variants made"
# variant: PTX dir, F16 rows a block, Q5_K rows a block
env_of() {
	case $1 in
	a) echo "EMBER_CUDA_PTX_DIR=/tmp/v/a EMBER_X_HALF_ROWS=16" ;;
	b) echo "EMBER_CUDA_PTX_DIR=/tmp/v/b EMBER_X_HALF_ROWS=8" ;;
	c) echo "EMBER_CUDA_PTX_DIR=/tmp/v/c EMBER_X_HALF_ROWS=4" ;;
	cg) echo "EMBER_CUDA_PTX_DIR=/tmp/v/c EMBER_X_HALF_ROWS=4 EMBER_X_HALF_NOSMEM=1" ;;
	bg) echo "EMBER_CUDA_PTX_DIR=/tmp/v/b EMBER_X_HALF_ROWS=8 EMBER_X_HALF_NOSMEM=1" ;;
	d) echo "EMBER_CUDA_PTX_DIR=/tmp/v/d EMBER_X_HALF_ROWS=8" ;;
	e) echo "EMBER_CUDA_PTX_DIR=/tmp/v/e EMBER_X_HALF_ROWS=4" ;;
	f) echo "EMBER_CUDA_PTX_DIR=/tmp/v/f EMBER_X_HALF_ROWS=8" ;;
	g) echo "EMBER_CUDA_PTX_DIR=/tmp/v/g EMBER_X_HALF_ROWS=4" ;;
	q1) echo "EMBER_CUDA_PTX_DIR=/tmp/v/q1 EMBER_X_Q5_ROWS=4" ;;
	q4) echo "EMBER_CUDA_PTX_DIR=/tmp/v/q4 EMBER_X_Q5_ROWS=16" ;;
	esac
}
for v in a b c d e f g q1 q4 cg; do
	(cd inference/backend/cuda && env $(env_of $v) timeout -s KILL 60 "$R/bin/dev/cuda.test" -test.run 'TestMatVecBatch1$' >/tmp/t-$v.log 2>&1
		echo "$v: rc $? $(tail -1 /tmp/t-$v.log)")
done
wait
el "tests done"
for r in 1 2; do
	line=""
	for v in a b c d e f g cg bg; do line="$line $v $(q env $(env_of $v) $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/f16.gguf)"; done
	el "f16 tg128:$line"
	line=""
	for v in a q1 q4; do line="$line $v $(q env $(env_of $v) $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/q5.gguf)"; done
	el "q5 tg128:$line"
done
