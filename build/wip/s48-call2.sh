#!/bin/sh
# s48-call2.sh (session 48): the batch-1 products of Q5_K, F16 and BF16 weights on mv1
# (kernels/cuda/mv1x.cuh; they were mmv_generic's). Every module's PTX made here
# ($OUT/ptx.tar.xz: mv1.cuh changed every hash; only matmul.ptx's body should change).
# Tests on it: the mat-vec products (TestMatVecBatch1 now takes Q5_K, F16 and BF16),
# queue, name and IDW tests (group 0), conformance (group 1), the goldens and
# deepseek2's CUDA tests. Then tg128, the committed binary on its PTX (bin/base) against
# the new one: 8B Q5_K_M, F16 and Q4_K_M (whose kernels do not change). Carry bin/dev
# and bin/base (build/wip/s48-prep.sh).
set -u
export MODELS="q4 q5 f16"
. build/gpu-setup.sh "${OUT:-/tmp/s48c2}"
ptx_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMatVecBatch1|DenseEvict|KernelNamesExist|EmbeddedKernelsWait|RunKernelWeights|IDW|MMVQueue|MatMulShared|FusedDecoderLayers' 300
tgroup 1 'TestConformance$' 300
model_tests 300
wait
el "tests done"
unset EMBER_CUDA_PTX_DIR
base_bin
N="EMBER_CUDA_PTX_DIR=/tmp/px $E"
ab 3 q5 "$B" "$N"
ab 2 f16 "$B" "$N"
ab 2 q4 "$B" "$N"
el "q5 pp512 committed / new: $(p $B bench -backend cuda -p 512 -n 0 -r 1 -m /tmp/q5.gguf) / $(p env $N bench -backend cuda -p 512 -n 0 -r 1 -m /tmp/q5.gguf)"
