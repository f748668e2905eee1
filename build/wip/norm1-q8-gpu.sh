#!/bin/sh
# norm1-q8-gpu.sh: the device call for build/wip/norm1-q8.patch (its header says how to
# build). quant.ptx made here into $OUT; the fused-norm tests on it; 8B Q8_0 tg128 with
# add_rms_norm_q8_1 against EMBER_CUDA_NO_NORM1=1 (add_rms_norm_q8 and the 1,024-thread
# Q8_K norm), three rounds alternating; 8B Q4_K_M once each (its norm is unchanged).
set -u
export MODELS="q8 q4"
. build/gpu-setup.sh "${OUT:-/tmp/n1q8}"
D=/tmp/pv-n1q8
sh build/ptx-copy.sh $D quant && cp $D/quant.ptx "$L/quant.ptx"
export EMBER_CUDA_PTX_DIR=$D
(cd inference/backend/cuda && timeout -s KILL 240 "$R/bin/dev/cuda.test" -test.run 'TestFusedAddRMSNorm|TestFuseQueue' 2>&1 | tail -3)
wait
B="bench -backend cuda -p 0 -n 128 -r 3"
for r in 1 2 3; do
	echo "round $r 8B Q8_0: norm1 $(q "$E" $B -m /tmp/q8.gguf) | 1024 threads $(EMBER_CUDA_NO_NORM1=1 q "$E" $B -m /tmp/q8.gguf)"
done
echo "8B Q4_K_M: norm1 $(q "$E" $B -m /tmp/q4.gguf) | 1024 threads $(EMBER_CUDA_NO_NORM1=1 q "$E" $B -m /tmp/q4.gguf)"
