#!/bin/sh
# s48-call4.sh (session 48): the landed shapes (F16/BF16 rows two a warp, each 16-byte
# chunk's products summed in float: s48-call3.sh's variant f). Every module's PTX made
# here ($OUT/ptx.tar.xz); on it the mat-vec, queue, name and IDW tests, conformance, the
# goldens and deepseek2's CUDA tests. Then tg128, bin/base (7803191: F16 rows four a
# warp, every product added in double) against the new: 8B F16, BF16, Q5_K_M, Q4_K_M;
# and two more F16 shapes (bin/dev was built with a reduced s48-xrows.patch: only
# EMBER_X_HALF_ROWS, default 8). deepseek2's strict device-against-host MoE test failed
# here (F16 experts: the 2-8 row products still added every product in double), which
# s48-call5.sh's sources mend.
set -u
export MODELS="q4 q5 f16 bf"
. build/gpu-setup.sh "${OUT:-/tmp/s48c4}"
ptx_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMatVecBatch1|DenseEvict|KernelNamesExist|EmbeddedKernelsWait|RunKernelWeights|IDW|MMVQueue|MatMulShared|FusedDecoderLayers' 300
tgroup 1 'TestConformance$' 300
model_tests 300
wait
el "tests done"
unset EMBER_CUDA_PTX_DIR
mk() {
	d=/tmp/v/$1
	shift
	mkdir -p $d && cp /tmp/px/*.ptx kernels/cuda/*.cu kernels/cuda/*.cuh $d/ && sh build/ptx-one.sh $d matmul "$@" 2>/dev/null
}
mk h -DHALF_R1=2 -DHALF_U=4 &
mk i -DHALF_R1=4 -DHALF_U=3 &
base_bin
N="EMBER_CUDA_PTX_DIR=/tmp/px $E"
ab 2 f16 "$B" "$N"
ab 2 bf "$B" "$N"
ab 2 q5 "$B" "$N"
ab 1 q4 "$B" "$N"
wait
el "f16 shapes: 2x3 $(q env $N bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/f16.gguf) 2x4 $(q env EMBER_CUDA_PTX_DIR=/tmp/v/h $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/f16.gguf) 4x3 $(q env EMBER_CUDA_PTX_DIR=/tmp/v/i EMBER_X_HALF_ROWS=16 $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/f16.gguf)"
el "pp512 new: f16 $(p env $N bench -backend cuda -p 512 -n 0 -r 1 -m /tmp/f16.gguf) q5 $(p env $N bench -backend cuda -p 512 -n 0 -r 1 -m /tmp/q5.gguf)"
