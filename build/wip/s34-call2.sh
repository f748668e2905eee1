#!/bin/sh
# Session 34, device call 2, on the tree with build/wip/att1-engine.patch applied (carry
# bin/dev, TESTS="cuda archs deepseek2"): every PTX made here into $OUT/ptx.tar.xz; the
# backend's GPU tests in four concurrent groups (-test.v, so a limit names where it
# stopped), the CUDA goldens and deepseek2's CUDA tests on it; then 8B Q4_K_M, Q8_0 and
# V2-Lite tg128 with attention_decD_1 against EMBER_CUDA_NO_DEC1=1, alternating.
set -u
export MODELS="q4 q8 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s34c2}"
t0=$(date +%s)
el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
D=/tmp/pv
sh build/ptx-copy.sh $D || el "PTX FAILED"
(cd $D && tar cJf "$L/ptx.tar.xz" *.ptx)
el ptx done
export EMBER_CUDA_PTX_DIR=$D
T=$R/bin/dev/cuda.test
g() { n=$1 pat=$2; (cd inference/backend/cuda && timeout -s KILL 400 "$T" -test.v -test.run "$pat" >/tmp/g$n.log 2>&1; echo "group $n rc $?: $(grep -E -c -- '^--- PASS' /tmp/g$n.log) pass, $(grep -E -c -- '--- FAIL' /tmp/g$n.log) fail; last: $(grep -E -- '^(=== RUN|--- )' /tmp/g$n.log | tail -1)"; grep -E -A3 -- '--- FAIL' /tmp/g$n.log | head -20) & }
g 1 'TestConformance$'
g 2 'TestConformanceLongContextKernels'
g 3 'TestDecodeAttention|TestAttention|TestDec1|TestBranchedGraph|TestKernelNames|TestFuseQueue'
g 4 'TestFused'
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
