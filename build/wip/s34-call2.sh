#!/bin/sh
# Session 34, device call 2, on the tree with build/wip/att1-engine.patch applied (carry
# bin/dev, TESTS="cuda archs deepseek2"): every PTX made here into $OUT/ptx.tar.xz; the
# backend's GPU tests in four concurrent groups (-test.v, so a limit names where it
# stopped), the CUDA goldens and deepseek2's CUDA tests on it; then 8B Q4_K_M, Q8_0 and
# V2-Lite tg128 with attention_decD_1 against EMBER_CUDA_NO_DEC1=1, alternating.
set -u
export MODELS="q4 q8 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s34c2}"
D=/tmp/pv
ptx_all $D
export EMBER_CUDA_PTX_DIR=$D
tgroup 1 'TestConformance$' 400
tgroup 2 'TestConformanceLongContextKernels' 400
tgroup 3 'TestDecodeAttention|TestAttention|TestDec1|TestBranchedGraph|TestKernelNames|TestFuseQueue' 400
tgroup 4 'TestFused' 400
(cd inference/model/archs && timeout -s KILL 300 "$R/bin/dev/archs.test" -test.run 'CUDA' 2>&1 | tail -3) &
(cd inference/model/deepseek2 && timeout -s KILL 300 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -2) &
wait
el tests done
cp /tmp/g*.log "$L/" 2>/dev/null
B="bench -backend cuda -p 0 -n 128 -r 3"
for r in 1 2; do
	el "round $r 8B Q4_K_M: dec1 $(q "$E" $B -m /tmp/q4.gguf) | no dec1 $(EMBER_CUDA_NO_DEC1=1 q "$E" $B -m /tmp/q4.gguf)"
	el "round $r 8B Q8_0: dec1 $(q "$E" $B -m /tmp/q8.gguf) | no dec1 $(EMBER_CUDA_NO_DEC1=1 q "$E" $B -m /tmp/q8.gguf)"
done
el "V2-Lite: dec1 $(q "$E" $B -m /tmp/v2.gguf) | no dec1 $(EMBER_CUDA_NO_DEC1=1 q "$E" $B -m /tmp/v2.gguf)"
