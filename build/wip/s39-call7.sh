#!/bin/sh
# s39-call7.sh: the session's final code (host-side changes after call 6: no draw ahead
# at a NaN temperature, the repeat penalty's product rounded explicitly) on the
# committed PTX: the feeder tests and the engine's GPU tests, then one 8B stream drawn
# with Ollama's repeat penalty and at temperature 1. bin/dev: TESTS="cuda engine"
# (without testdata/vocab, testdata/tokenizers).
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s39c7}"
tgroup 0 'TestSampleAhead|TestFeeder|TestKernelNamesExist|TestEmbeddedKernelsWait' 150
(cd inference/engine && timeout -s KILL 150 "$R/bin/dev/engine.test" -test.v -test.run 'CUDA' 2>&1 | grep -E -- '^(--- |ok|FAIL|PASS)' | tail -4) &
wait
el "tests done"
b() { s "$E" bench -backend cuda -streams 1 -p 16 -n 128 -m /tmp/q4.gguf $1; }
el "8B 1 stream: greedy $(b '-r 1') sample+penalty1.1 $(b '-sample -penalty 1.1') temp1 $(b '-temp 1')"
