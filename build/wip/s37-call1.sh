#!/bin/sh
# s37-call1.sh: sampled decoding a step ahead (SampleAhead: topk_f32 + sample_top_f32).
# Makes sample.ptx on the H200 (returned as $OUT/sample.ptx) and runs everything on it
# (EMBER_CUDA_PTX_DIR): TestSampleAhead, TestFeeder, TestArgMax, TestTopK,
# TestKernelNamesExist; the engine's TestAheadCUDA (greedy and sampled requests against
# SyncSteps); then one stream of 512 + 128 sampled as the app does (-sample), ahead
# against -sync, 8B Q4_K_M and V2-Lite, two rounds alternating; 8B greedy tg128 (the
# argmax kernel's body moved into argmax_block). bin/dev built with TESTS="cuda engine".
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s37c1}"
sh build/ptx-copy.sh /tmp/px sample || el "PTX FAILED"
cp /tmp/px/sample.ptx "$L/sample.ptx"
export EMBER_CUDA_PTX_DIR=/tmp/px
el "ptx made"
tgroup 0 'TestSampleAhead|TestFeeder|TestArgMax|TestTopK|TestKernelNamesExist' 150
(cd inference/engine && timeout -s KILL 240 "$R/bin/dev/engine.test" -test.run 'TestAheadCUDA' -test.v 2>&1 | grep -E '^(---|ok|FAIL|PASS)|^\s+--- |Error|panic' | tail -14) &
wait
el "tests done"
for r in 1 2; do
	el "8B sampled 1 stream ahead: $(s "$E" bench -backend cuda -streams 1 -p 512 -n 128 -sample -m /tmp/q4.gguf)"
	el "8B sampled 1 stream -sync: $(s "$E" bench -backend cuda -streams 1 -p 512 -n 128 -sample -sync -m /tmp/q4.gguf)"
	el "V2 sampled 1 stream ahead: $(s "$E" bench -backend cuda -streams 1 -p 512 -n 128 -sample -m /tmp/v2.gguf)"
	el "V2 sampled 1 stream -sync: $(s "$E" bench -backend cuda -streams 1 -p 512 -n 128 -sample -sync -m /tmp/v2.gguf)"
done
el "8B greedy 1 stream ahead: $(s "$E" bench -backend cuda -streams 1 -p 512 -n 128 -m /tmp/q4.gguf)"
el "8B tg128 ahead: $(q "$E" bench -backend cuda -p 0 -n 128 -r 3 -m /tmp/q4.gguf)"
el "8B 64 streams sampled ahead: $(s "$E" bench -backend cuda -streams 64 -p 512 -n 128 -sample -m /tmp/q4.gguf)"
