#!/bin/sh
# s37-call9.sh: the final build with its embedded (committed) PTX: TestDec1Cluster,
# TestSampleAhead, TestFeeder, TestTopK; one stream at 512 positions greedy and sampled
# as the app does, and at 2,048 (attention_decD_1c up to 2,048, attention_split1 past it).
# bin/dev: TESTS="cuda".
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s37c9}"
tgroup 0 'TestDec1Cluster|TestSampleAhead|TestFeeder|TestTopK' 150
wait
el "8B 1 stream p512: $(s "$E" bench -backend cuda -streams 1 -p 512 -n 128 -m /tmp/q4.gguf)"
el "8B 1 stream p512 sampled: $(s "$E" bench -backend cuda -streams 1 -p 512 -n 128 -sample -m /tmp/q4.gguf)"
el "8B 1 stream p2048: $(s "$E" bench -backend cuda -streams 1 -p 2048 -n 64 -m /tmp/q4.gguf)"
