#!/bin/sh
# Session 34, device call 5: attention_decD_1's shared memory sized to the positions
# (multiples of 64, scap) instead of 256. Every PTX made here into $OUT/ptx.tar.xz; the
# attention, choice, conformance, fused-attention, graph and CUDA golden tests on it;
# build/micro/att1.cu at N 1, 33, 128 (CAP=256: the first form); 8B Q4_K_M and Q8_0
# tg128 sized against EMBER_CUDA_DEC1_FULL=1, alternating. Carry bin/dev
# (TESTS="cuda archs").
set -u
export MODELS="q4 q8"
. build/gpu-setup.sh "${OUT:-/tmp/s34c5}"
D=/tmp/pv
ptx_all $D
(cd build/micro && nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/att1 att1.cu 2>&1 | grep -i error)
el ptx done
for n in 1 33 128; do
	echo "sized: $(N=$n timeout 30 /tmp/att1 2>&1 | grep -E '32 layers|differ' | tr '\n' ' ')"
	echo "256:   $(CAP=256 N=$n timeout 30 /tmp/att1 2>&1 | grep '32 layers')"
done
export EMBER_CUDA_PTX_DIR=$D
tgroup 0 'TestDecodeAttention|TestAttention|TestDec1|TestKernelNames|TestBranchedGraph' 200
tgroup 1 'TestConformance$' 200
tgroup 2 'TestFusedAttention|TestFusedDecoderLayers|TestFusedQ8KHalf' 200
(cd inference/model/archs && timeout -s KILL 200 "$R/bin/dev/archs.test" -test.run 'CUDA' 2>&1 | tail -3) &
wait
el tests done
cp /tmp/g*.log "$L/" 2>/dev/null
B="bench -backend cuda -p 0 -n 128 -r 3"
for r in 1 2 3; do
	el "round $r 8B Q4_K_M: sized $(q "$E" $B -m /tmp/q4.gguf) | 256 $(EMBER_CUDA_DEC1_FULL=1 q "$E" $B -m /tmp/q4.gguf)"
done
el "8B Q8_0: sized $(q "$E" $B -m /tmp/q8.gguf) | 256 $(EMBER_CUDA_DEC1_FULL=1 q "$E" $B -m /tmp/q8.gguf)"
