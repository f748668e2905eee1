#!/bin/sh
# s50-call4.sh (session 50): the 32-value types' dense products at three steps in flight
# and three blocks an SM (-DLO50_D=3 -DLO50_MINB=3: 168 registers, no spills) against
# the landed two steps at four blocks an SM; Q5_1 before (bin/base: 811b9cc, the
# session's first commit's parent) and after; then ncu's sections and SASS stalls for
# mmv_q4_0_1 and mmv_multi_q4_0 in one Q4_0 decode step ($OUT/prof.tar.gz).
# Local steps: bin/base from 811b9cc by hand (git worktree), `TESTS=cuda sh
# build/dev-build.sh`, the PTX and test data held out (s45-prep.sh hold); carry bin/dev,
# bin/base.
set -u
export MODELS="q40 q41 q51"
. build/gpu-setup.sh "${OUT:-/tmp/s50c4}"
ptx_all /tmp/px
rm -rf /tmp/px3 && cp -r /tmp/px /tmp/px3 && sh build/ptx-one.sh /tmp/px3 matmul -DLO50_D=3 -DLO50_MINB=3 2>/dev/null && cp /tmp/px3/matmul.ptx $L/matmul-d3m3.ptx
for d in px px3; do
	(cd inference/backend/cuda && EMBER_CUDA_PTX_DIR=/tmp/$d timeout -s KILL 150 $R/bin/dev/cuda.test -test.run 'TestMatVecBatch1|MatMulShared|MV1xQueue' 2>&1 | tail -2 | sed "s/^/$d tests: /")
done
wait
base_bin
b() { d=$1 m=$2; shift 2; q env EMBER_CUDA_PTX_DIR=$d "$@" $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf; }
for r in 1 2; do
	for m in q40 q41 q51; do
		el "$m tg128 base / landed / d3m3: $(q $B bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf) / $(b /tmp/px $m) / $(b /tmp/px3 $m)"
	done
done
EMBER_CUDA_PTX_DIR=/tmp/px DETAIL="mmv_q4_0_1 mmv_multi_q4_0" SASS=1 PACK=1 timeout -s KILL 200 sh build/profile-cuda.sh $E /tmp/q40.gguf $L/prof -p 0 -n 32 -r 1 2>&1 | tail -60
