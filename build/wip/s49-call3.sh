#!/bin/sh
# s49-call3.sh (session 49): Q4_1 and Q5_1 batch-1 products on mv1 (mv1lo.cuh's
# mv1_q4q5, Q4_0/Q5_0's lanes with the min term; until now mmv_generic's byte loads),
# every module's PTX made here. Local steps as s49-call2.sh (s48-prep.sh 1 / restore).
# Tests on the call's PTX: the mat-vec, shared, queue, name and IDW tests (Q4_1/Q5_1 at
# K 32 .. 46,080, per-head groups), conformance, the goldens, deepseek2's CUDA tests.
# Then tg128 of 8B Q4_1 and Q5_1, base / new, two rounds; the README's rows for Q3_K_M
# and Q2_K (pp512 and tg128, medians of 3).
set -u
export MODELS="q41 q51 q3 q2"
. build/gpu-setup.sh "${OUT:-/tmp/s49c3}"
ptx_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMatVecBatch1|DenseEvict|KernelNamesExist|EmbeddedKernelsWait|RunKernelWeights|IDW|MMVQueue|MatMulShared|MV1xQueue|FusedDecoderLayers' 300
tgroup 1 'TestConformance$' 300
model_tests 300
wait
el "tests done"
unset EMBER_CUDA_PTX_DIR
base_bin
N="EMBER_CUDA_PTX_DIR=/tmp/px $E"
for r in 1 2; do
	for m in q41 q51; do
		el "$m tg128 base / new: $(q $B bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf) / $(q env $N bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf)"
	done
done
for m in q3 q2; do
	el "$m pp512 new: $(p env $N bench -backend cuda -p 512 -n 0 -r 3 -m /tmp/$m.gguf); tg128 new: $(q env $N bench -backend cuda -p 0 -n 128 -r 3 -m /tmp/$m.gguf)"
done
