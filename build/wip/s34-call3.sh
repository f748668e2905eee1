#!/bin/sh
# Session 34, device call 3: attention_decD_1r (a decode row's rope2_set done by the
# one-row attention). Every PTX made here into $OUT/ptx.tar.xz (common.cuh and
# attention_one.cuh changed); TestFusedRoPEAttention and the attention, fusion,
# conformance and golden tests on it; 8B Q4_K_M and Q8_0 tg128 with the fusion against
# EMBER_CUDA_NO_DEC1_ROPE=1, alternating. Carry bin/dev (TESTS="cuda archs").
set -u
export MODELS="q4 q8"
. build/gpu-setup.sh "${OUT:-/tmp/s34c3}"
D=/tmp/pv
ptx_all $D
export EMBER_CUDA_PTX_DIR=$D
tgroup 0 'TestFusedRoPEAttention' 330
tgroup 1 'TestConformance$' 330
tgroup 3 'TestDecodeAttention|TestAttention|TestDec1|TestBranchedGraph|TestKernelNames|TestFuseQueue' 330
tgroup 4 'TestFused[^R]|TestFusedRoPE$|TestFusedRoPESet' 330
(cd inference/model/archs && timeout -s KILL 300 "$R/bin/dev/archs.test" -test.run 'CUDA' 2>&1 | tail -3) &
# (deepseek2.test left out: the carry limit) (cd inference/model/deepseek2 && timeout -s KILL 300 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -2) &
wait
el tests done
cp /tmp/g*.log "$L/" 2>/dev/null
B="bench -backend cuda -p 0 -n 128 -r 3"
for r in 1 2 3; do
	el "round $r 8B Q4_K_M: rope joined $(q "$E" $B -m /tmp/q4.gguf) | rope2_set $(EMBER_CUDA_NO_DEC1_ROPE=1 q "$E" $B -m /tmp/q4.gguf)"
done
for r in 1 2; do
	el "round $r 8B Q8_0: rope joined $(q "$E" $B -m /tmp/q8.gguf) | rope2_set $(EMBER_CUDA_NO_DEC1_ROPE=1 q "$E" $B -m /tmp/q8.gguf)"
done
