#!/bin/sh
# Session 33, device call 9: add_rms_norm_q8_k_1 (a decode row's norm on 256 threads).
# quant.ptx made here into $OUT; the fused-norm, fusion, conformance and golden tests on
# it; 8B Q4_K_M and V2-Lite tg128 with it against EMBER_CUDA_NO_NORM1=1 (the 1,024-thread
# kernel), alternating; build/micro/mvp.cu's chain at NORM 0, 1, 5. Carry bin/dev.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s33c9}"
D=/tmp/pv-n1
sh build/ptx-copy.sh $D quant && cp $D/quant.ptx "$L/quant.ptx"
(cd build/micro && nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/mvp mvp.cu 2>&1 | grep -i error) &
export EMBER_CUDA_PTX_DIR=$D
(cd inference/backend/cuda && timeout -s KILL 300 "$R/bin/dev/cuda.test" -test.run 'TestFused|TestConformance|TestKernelNames|TestBranchedGraph' 2>&1 | tail -4)
(cd inference/model/archs && timeout -s KILL 200 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA' 2>&1 | tail -2) &
(cd inference/model/deepseek2 && timeout -s KILL 200 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -2) &
wait
for n in 0 1 5 0 1 5; do GAP=0 NORM=$n timeout 60 /tmp/mvp 2>&1 | grep -E "^NORM" | sed 's/, persistent.*plain/, plain/'; done
B="bench -backend cuda -p 0 -n 128 -r 3"
for r in 1 2 3; do
	echo "round $r 8B: norm1 $(q "$E" $B -m /tmp/q4.gguf) | 1024 threads $(EMBER_CUDA_NO_NORM1=1 q "$E" $B -m /tmp/q4.gguf)"
done
for r in 1 2; do
	echo "round $r V2-Lite: norm1 $(q "$E" $B -m /tmp/v2.gguf) | 1024 threads $(EMBER_CUDA_NO_NORM1=1 q "$E" $B -m /tmp/v2.gguf)"
done
