#!/bin/sh
# s39-call5.sh: the session's final code on the committed PTX: the feeder tests
# (TestSampleAhead's whole-row draws against the host's drawRow, now shared among the
# cores), the engine's TestAheadCUDA, then tg128 (8B Q4_K_M and V2-Lite, medians of 3)
# and one 8B stream at temperature 1. bin/dev: TESTS="cuda engine" (without
# testdata/vocab, testdata/tokenizers).
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s39c5}"
tgroup 0 'TestSampleAhead|TestFeeder|TestKernelNamesExist|TestEmbeddedKernelsWait' 150
(cd inference/engine && timeout -s KILL 150 "$R/bin/dev/engine.test" -test.run 'CUDA' 2>&1 | tail -2) &
wait
el "tests done"
el "8B tg128: $(q "$E" bench -backend cuda -p 0 -n 128 -r 3 -m /tmp/q4.gguf)"
el "V2-Lite tg128: $(q "$E" bench -backend cuda -p 0 -n 128 -r 3 -m /tmp/v2.gguf)"
el "8B 1 stream temp1: $(s "$E" bench -backend cuda -streams 1 -p 16 -n 128 -temp 1 -m /tmp/q4.gguf) greedy: $(s "$E" bench -backend cuda -streams 1 -p 16 -n 128 -m /tmp/q4.gguf)"
