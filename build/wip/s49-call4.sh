#!/bin/sh
# s49-call4.sh (session 49): Q4_0, Q5_0, Q4_1 and Q5_1 batch-1 products staged through
# shared memory from 16-byte loads (mv1lo.cuh's lo_load / lo_stage, one lane a block, 32
# blocks a step, four rows a warp), as Q2_K and Q3_K (refactored onto the same helpers);
# against HEAD's 16-bit loads of each lane's bytes (8B Q4_1 204 tok/s, call 3). Local
# steps as s49-call2.sh (s48-prep.sh 1 / restore). Tests on the call's PTX as call 3;
# then tg128 base / new of 8B Q4_0, Q4_1, Q5_1 and Q3_K_M, two rounds.
set -u
export MODELS="q40 q41 q51 q3"
. build/gpu-setup.sh "${OUT:-/tmp/s49c4}"
ptx_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMatVecBatch1|DenseEvict|KernelNamesExist|EmbeddedKernelsWait|RunKernelWeights|IDW|MMVQueue|MatMulShared|MV1xQueue|FusedDecoderLayers|WidenQ5' 300
tgroup 1 'TestConformance$' 300
model_tests 300
wait
el "tests done"
unset EMBER_CUDA_PTX_DIR
base_bin
N="EMBER_CUDA_PTX_DIR=/tmp/px $E"
for r in 1 2; do
	for m in q40 q41 q51 q3; do
		el "$m tg128 base / new: $(q $B bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf) / $(q env $N bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf)"
	done
done
