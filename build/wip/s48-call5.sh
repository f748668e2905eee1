#!/bin/sh
# s48-call5.sh (session 48): the F16/BF16 rows' rounding shared by mv1_half and
# mmv_generic's 2-8 row products (8-element chunks summed in float, the chunk sums in
# double), so deepseek2's strict device-against-host MoE test (F16 experts) holds again.
# Every module's PTX made here; the tests of s48-call4.sh on it; 8B F16 tg128 and pp512.
set -u
export MODELS="f16"
. build/gpu-setup.sh "${OUT:-/tmp/s48c5}"
ptx_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMatVecBatch1|DenseEvict|KernelNamesExist|EmbeddedKernelsWait|RunKernelWeights|IDW|MMVQueue|MatMulShared|FusedDecoderLayers' 150
tgroup 1 'TestConformance$' 150
model_tests 150
wait
el "tests done"
el "f16 tg128 $(q $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/f16.gguf) pp512 $(p $E bench -backend cuda -p 512 -n 0 -r 1 -m /tmp/f16.gguf)"
