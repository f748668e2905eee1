#!/bin/sh
# Session 33, device call 11: add_rms_norm_q8_1 (Q8_0's one-row norm) beside
# add_rms_norm_q8_k_1. quant.ptx made here into $OUT; the fused, conformance, mat-vec,
# graph and golden tests on it; 8B Q8_0, Q4_K_M and V2-Lite tg128 with the one-row norms
# against EMBER_CUDA_NO_NORM1=1, alternating. Carry bin/dev.
set -u
export MODELS="q8 q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s33c11}"
D=/tmp/pv-n1
sh build/ptx-copy.sh $D quant && cp $D/quant.ptx "$L/quant.ptx"
export EMBER_CUDA_PTX_DIR=$D
(cd inference/backend/cuda && timeout -s KILL 300 "$R/bin/dev/cuda.test" -test.run 'TestFused|TestConformance|TestKernelNames|TestBranchedGraph|TestMatVec' 2>&1 | tail -3)
# (archs.test left out of this call: the carry limit)
(cd inference/model/deepseek2 && timeout -s KILL 200 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -2) &
wait
B="bench -backend cuda -p 0 -n 128 -r 3"
for r in 1 2; do
	echo "round $r 8B Q8_0: norm1 $(q "$E" $B -m /tmp/q8.gguf) | 1024 threads $(EMBER_CUDA_NO_NORM1=1 q "$E" $B -m /tmp/q8.gguf)"
done
echo "8B Q4_K_M: norm1 $(q "$E" $B -m /tmp/q4.gguf) | 1024 threads $(EMBER_CUDA_NO_NORM1=1 q "$E" $B -m /tmp/q4.gguf)"
echo "V2-Lite: norm1 $(q "$E" $B -m /tmp/v2.gguf) | 1024 threads $(EMBER_CUDA_NO_NORM1=1 q "$E" $B -m /tmp/v2.gguf)"
echo "8B Q4_K_M pp512 $(p "$E" bench -backend cuda -p 512 -n 0 -r 3 -m /tmp/q4.gguf)"
