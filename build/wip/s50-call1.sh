#!/bin/sh
# s50-call1.sh (session 50): build/wip/multi-lo.patch (one mmv_multi launch for the
# projections of one row whose weights are all Q2_K/Q3_K, all Q4_0/Q5_0 or all
# Q4_1/Q5_1) with mv1lo.cuh's steps on lo_run (LO_D steps in flight a warp), and LO_D=2
# as a matmul.ptx variant (/tmp/px2): the staged kernels reach 33-43% of their bound
# against Q4_K's 60%, and keep about half of Q4_K's bytes in flight a warp.
# Local steps: `sh build/wip/s48-prep.sh 1` on the patched tree; carry bin/dev, bin/base;
# after: `sh build/wip/s48-prep.sh restore`.
set -u
export MODELS="q40 q41 q3 q2"
. build/gpu-setup.sh "${OUT:-/tmp/s50c1}"
ptx_all /tmp/px
rm -rf /tmp/px2 && cp -r /tmp/px /tmp/px2 && sh build/ptx-one.sh /tmp/px2 matmul -DLO_D=2 2>/dev/null && cp /tmp/px2/matmul.ptx $L/matmul-lo2.ptx
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMatVecBatch1|DenseEvict|KernelNamesExist|EmbeddedKernelsWait|RunKernelWeights|IDW|MMVQueue|MatMulShared|MV1xQueue|FusedDecoderLayers' 300
tgroup 1 'TestConformance$' 300
model_tests 300
wait
el "tests done"
(cd inference/backend/cuda && EMBER_CUDA_PTX_DIR=/tmp/px2 timeout -s KILL 200 $R/bin/dev/cuda.test -test.run 'TestMatVecBatch1|IDW|MatMulShared' 2>&1 | tail -2 | sed 's/^/lo2 tests: /')
unset EMBER_CUDA_PTX_DIR
base_bin
N="EMBER_CUDA_PTX_DIR=/tmp/px $E"
N2="EMBER_CUDA_PTX_DIR=/tmp/px2 $E"
for r in 1 2; do
	for m in q40 q41 q3 q2; do
		el "$m tg128 base / new / lo2: $(q $B bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf) / $(q env $N bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf) / $(q env $N2 bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf)"
	done
done
