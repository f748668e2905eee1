#!/bin/sh
# s39-call2.sh: whole-row draws on the device (sample.cu's sample_row_max, _sum, _draw;
# feed.go's rowTo), so a request with a temperature alone (OpenAI's default) decodes a
# step ahead like greedy and top-k ones. Makes sample.ptx ($OUT), runs the feeder and
# kernel tests and the engine's TestAheadCUDA on it, then one and four 8B streams
# drawing at temperature 1 ahead against -sync (the host reads each row, as before),
# greedy beside them. bin/dev: TESTS="cuda engine" (without testdata/vocab, tokenizers).
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s39c2}"
sh build/ptx-copy.sh /tmp/px sample || el "PTX FAILED"
cp /tmp/px/sample.ptx "$L/"
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestSampleAhead|TestFeeder|TestArgMax|TestTopK|TestKernelNamesExist|TestEmbeddedKernelsWait' 200
(cd inference/engine && timeout -s KILL 200 "$R/bin/dev/engine.test" -test.v -test.run 'CUDA' 2>&1 | grep -E -- '^(--- |ok|FAIL|PASS)|_test.go' | tail -12) &
wait
el "tests done"
b() { s "$E" bench -backend cuda -streams $1 -p 16 -n 128 -m /tmp/q4.gguf $2; }
for round in 1 2; do
	el "1 stream: greedy $(b 1) temp1 $(b 1 '-temp 1') temp1-sync $(b 1 '-temp 1 -sync') greedy-sync $(b 1 -sync) temp0.7 $(b 1 '-temp 0.7')"
	el "4 streams: greedy $(b 4) temp1 $(b 4 '-temp 1') temp1-sync $(b 4 '-temp 1 -sync')"
done
el "16 streams: temp1 $(b 16 '-temp 1') temp1-sync $(b 16 '-temp 1 -sync')"
