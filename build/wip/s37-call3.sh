#!/bin/sh
# s37-call3.sh: call 2 with the top-k grid turned (rows on x, parts on y: call 2 put
# 70,000 rows on y, past its 65,535). Makes
# sample.ptx on the H200 ($OUT/sample.ptx), runs on it (EMBER_CUDA_PTX_DIR): TestTopK,
# TestSampleAhead, TestFeeder, TestArgMax, TestKernelNamesExist, the engine's
# TestAheadCUDA and TestTopK*; then sampled and greedy serving figures, ahead and -sync.
# bin/dev built with TESTS="cuda engine".
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s37c3}"
sh build/ptx-copy.sh /tmp/px sample || el "PTX FAILED"
cp /tmp/px/sample.ptx "$L/sample.ptx"
export EMBER_CUDA_PTX_DIR=/tmp/px
el "ptx made"
tgroup 0 'TestTopK|TestSampleAhead|TestFeeder|TestArgMax|TestKernelNamesExist' 200
(cd inference/engine && timeout -s KILL 240 "$R/bin/dev/engine.test" -test.run 'TestAheadCUDA|TopK' -test.v 2>&1 | grep -E '^(---|ok|FAIL|PASS)|^\s+--- FAIL|Error|panic' | tail -14) &
wait
el "tests done"
for r in 1; do
	el "8B sampled 1 stream ahead: $(s "$E" bench -backend cuda -streams 1 -p 512 -n 128 -sample -m /tmp/q4.gguf)"
	el "8B sampled 1 stream -sync: $(s "$E" bench -backend cuda -streams 1 -p 512 -n 128 -sample -sync -m /tmp/q4.gguf)"
	el "V2 sampled 1 stream ahead: $(s "$E" bench -backend cuda -streams 1 -p 512 -n 128 -sample -m /tmp/v2.gguf)"
	el "V2 sampled 1 stream -sync: $(s "$E" bench -backend cuda -streams 1 -p 512 -n 128 -sample -sync -m /tmp/v2.gguf)"
	el "8B greedy 1 stream ahead: $(s "$E" bench -backend cuda -streams 1 -p 512 -n 128 -m /tmp/q4.gguf)"
done
el "8B 64 streams sampled ahead: $(s "$E" bench -backend cuda -streams 64 -p 512 -n 128 -sample -m /tmp/q4.gguf)"
el "8B 64 streams greedy ahead: $(s "$E" bench -backend cuda -streams 64 -p 512 -n 128 -m /tmp/q4.gguf)"
el "V2 64 streams sampled ahead: $(s "$E" bench -backend cuda -streams 64 -p 512 -n 128 -sample -m /tmp/v2.gguf)"
