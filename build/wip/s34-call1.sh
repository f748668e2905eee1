#!/bin/sh
# Session 34, device call 1, on the tree with build/wip/att1-engine.patch and
# build/wip/norm1-q8.patch applied (carry bin/dev, TESTS="cuda archs deepseek2"):
# build/micro/att1.cu's chain (att1 against attention_dec128); every PTX made here into
# $OUT/ptx (q8k_quant_warp moved to common.cuh changes every hash) and quant.ptx again
# with -DNORM1_UNROLL; the attention, fusion, conformance, graph and golden tests on it;
# then 8B Q4_K_M and Q8_0 tg128 with attention_decD_1 and add_rms_norm_q8_1 against
# EMBER_CUDA_NO_DEC1=1 / EMBER_CUDA_NO_NORM1=1, alternating.
set -u
export MODELS="q4 q8"
. build/gpu-setup.sh "${OUT:-/tmp/s34c1}"
(cd build/micro && nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/att1 att1.cu 2>&1 | grep -i error)
for n in 1 33 128 256 1 256; do N=$n timeout 60 /tmp/att1 2>&1 | tail -4; done
el micro done
D=/tmp/pv
sh build/ptx-copy.sh $D || el "PTX FAILED"
mkdir -p "$L/ptx" && cp $D/*.ptx "$L/ptx/"
U=/tmp/pv-unroll
rm -rf $U && cp -r $D $U && sh build/ptx-one.sh $U quant -DNORM1_UNROLL && cp $U/quant.ptx "$L/unroll-quant.ptx"
el ptx done
export EMBER_CUDA_PTX_DIR=$D
(cd inference/model/archs && timeout -s KILL 200 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA|CUDA' 2>&1 | tail -3) &
(cd inference/model/deepseek2 && timeout -s KILL 200 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -2) &
(cd inference/backend/cuda && timeout -s KILL 240 "$R/bin/dev/cuda.test" -test.run 'TestDecodeAttention|TestAttention|TestDec1|TestFused|TestFuseQueue|TestConformance|TestKernelNames|TestBranchedGraph' 2>&1 | grep -E -- '^(--- FAIL|FAIL|ok|PASS)|panic' | head -20)
wait
el tests done
B="bench -backend cuda -p 0 -n 128 -r 3"
for r in 1 2 3; do
	el "round $r 8B Q4_K_M: dec1 $(q "$E" $B -m /tmp/q4.gguf) | no dec1 $(EMBER_CUDA_NO_DEC1=1 q "$E" $B -m /tmp/q4.gguf)"
done
for r in 1 2; do
	el "round $r 8B Q8_0: both $(q "$E" $B -m /tmp/q8.gguf) | no norm1 $(EMBER_CUDA_NO_NORM1=1 q "$E" $B -m /tmp/q8.gguf) | no dec1 $(EMBER_CUDA_NO_DEC1=1 q "$E" $B -m /tmp/q8.gguf)"
done
for r in 1 2; do
	el "round $r 8B Q4_K_M unrolled norm1 $(EMBER_CUDA_PTX_DIR=$U q "$E" $B -m /tmp/q4.gguf)"
done
