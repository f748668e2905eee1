#!/bin/sh
# s50-call1.sh (written in session 49, not run): build/wip/multi-lo.patch, one mmv_multi
# launch for the projections of one row whose weights are all Q2_K/Q3_K
# (mmv_multi_q3_k), all Q4_0/Q5_0 (mmv_multi_q4_0) or all Q4_1/Q5_1 (mmv_multi_q4_1):
# a Q4_0 file's Q/K/V and gate/up (five launches a layer now), Q3_K_M's and Q2_K's
# gate/up (two). The staged types' shared memory moves to lo_smem23/lo_smem50 (one
# array a kernel, whatever types it takes); nvcc 12.4 made the existing entries the
# same code (only the array's name and place differ). Expected: ~3 launches fewer a
# layer for Q4_0 (~0.1 ms of its ~2.9 ms step), one for Q3_K_M and Q2_K.
# Local steps: `git apply build/wip/multi-lo.patch && sh build/wip/s48-prep.sh 1`
# (bin/base from HEAD, bin/dev from the patched tree, the PTX and test data held out of
# the carry); carry bin/dev and bin/base; after: `sh build/wip/s48-prep.sh restore`, then
# `git checkout kernels inference` unless it lands (if it does: the PTX from
# $OUT/ptx.tar.xz into kernels/cuda).
set -u
export MODELS="q40 q41 q3 q2"
. build/gpu-setup.sh "${OUT:-/tmp/s50c1}"
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
	for m in q40 q41 q3 q2; do
		el "$m tg128 base / new: $(q $B bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf) / $(q env $N bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf)"
	done
done
