#!/bin/sh
# s47-call3.sh (session 47): what lands, measured against HEAD. The tree: topk-rank.patch
# (moe.cu) and the dense batch-1 products' evict-first forms (mmv_*_1e, mmv_multi*_e;
# evict.go: on once routed experts are seen). Every module's PTX made here into /tmp/px
# and $OUT/ptx.tar.xz (mv1.cuh changed, so every hash changes). Tests on it: the queue,
# routing and product tests (group 0), conformance (group 1), the products again with
# EMBER_CUDA_DENSE_EF=1 (group 2), the goldens and deepseek2's CUDA tests with
# EMBER_CUDA_DENSE_EF=1 (the llama goldens on the _e kernels). Then ab: HEAD's binary on
# its embedded PTX (bin/base) / the new one, 8 rounds; the new one with
# EMBER_CUDA_DENSE_EF=0 / without, 6 rounds; the 8B twice each side.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s47c3}"
ptx_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'DenseEvict|MoERouting|MMVQueue|KernelNamesExist|EmbeddedKernelsWait|MatVecBatch1|IDW|TopK' 200
tgroup 1 'TestConformance$' 200
(
	export EMBER_CUDA_DENSE_EF=1
	tgroup 2 'TestMatVecBatch1|TestMatMulSharedQ8_0|TestFusedDecoderLayers|TestWidenQ5Products|TestIDWBits' 200
	model_tests 200
	wait
)
wait
el "tests done"
unset EMBER_CUDA_PTX_DIR
base_bin
N="EMBER_CUDA_PTX_DIR=/tmp/px $E"
ab 8 v2 "$B" "$N"
ab 6 v2 "EMBER_CUDA_DENSE_EF=0 $N" "$N"
for r in 1 2; do
	el "q4 tg128 committed/new: $(q $B bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/q4.gguf) / $(q env $N bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/q4.gguf)"
done
