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
t0=$(date +%s)
el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
D=/tmp/pv
sh build/ptx-copy.sh $D || el "PTX FAILED"
(cd $D && tar cJf "$L/ptx.tar.xz" *.ptx)
el ptx done
export EMBER_CUDA_PTX_DIR=$D
T=$R/bin/dev/cuda.test
g() { n=$1 pat=$2; (cd inference/backend/cuda && timeout -s KILL 75 "$T" -test.v -test.run "$pat" >/tmp/g$n.log 2>&1; echo "group $n rc $?: $(grep -E -c -- '^--- PASS' /tmp/g$n.log) pass, $(grep -E -c -- '--- FAIL' /tmp/g$n.log) fail; last: $(grep -E -- '^(=== RUN|--- )' /tmp/g$n.log | tail -1)"; grep -E -A4 -- '--- FAIL' /tmp/g$n.log | head -24) & }
g 0 'TestDecodeAttention|TestAttention|TestDec1|TestKernelNames'
g 1 'TestConformance$'
g 2 'TestFusedAttention|TestFusedDecoderLayers'
(cd inference/model/archs && timeout -s KILL 75 "$R/bin/dev/archs.test" -test.run 'CUDA' 2>&1 | tail -3) &
wait
el tests done
B="bench -backend cuda -p 0 -n 128 -r 3"
for r in 1 2; do
	el "round $r 8B Q4_K_M: forms $(q "$E" $B -m /tmp/q4.gguf) | 256 only $(EMBER_CUDA_DEC1_FULL=1 q "$E" $B -m /tmp/q4.gguf)"
done
