#!/bin/sh
# Session 34, device call 6: attention_decD_1 in three forms (caps of 64, 128 and 256
# positions, compile-time: score groups a warp, shared memory). Every PTX made here into
# $OUT/ptx.tar.xz; the attention, choice, conformance, fused-attention and CUDA golden
# tests on it; 8B Q4_K_M tg128 on the forms against EMBER_CUDA_DEC1_FULL=1 (the form for
# 256 only), alternating.
# Carry bin/dev (TESTS="cuda archs"). Made to fit ~150 s (the last 240 s of device time).
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s34c6}"
D=/tmp/pv
ptx_all $D
export EMBER_CUDA_PTX_DIR=$D
tgroup 0 'TestDecodeAttention|TestAttention|TestDec1|TestKernelNames' 75
tgroup 1 'TestConformance$' 75
tgroup 2 'TestFusedAttention|TestFusedDecoderLayers' 75
(cd inference/model/archs && timeout -s KILL 75 "$R/bin/dev/archs.test" -test.run 'CUDA' 2>&1 | tail -3) &
wait
el tests done
B="bench -backend cuda -p 0 -n 128 -r 3"
for r in 1 2; do
	el "round $r 8B Q4_K_M: forms $(q "$E" $B -m /tmp/q4.gguf) | 256 only $(EMBER_CUDA_DEC1_FULL=1 q "$E" $B -m /tmp/q4.gguf)"
done
