#!/bin/sh
# s36-call9.sh: after the review's mends (the event calls shared by the clock and the
# pending reads, em_event_record in driver.go; argmaxTo): TestFeeder, TestArgMax,
# TestFedDecodeCUDA, and 8B tg128 ahead and -sync, once with EMBER_CUDA_STATS (the
# clock's timed events). Committed PTX. bin/dev built with TESTS="cuda archs". ~2 min.
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s36c9}"
tgroup 0 'TestFeeder|TestArgMax' 120
(cd inference/model/archs && timeout -s KILL 150 "$R/bin/dev/archs.test" -test.run 'TestFedDecodeCUDA' 2>&1 | tail -2) &
wait
el "8B tg128 ahead: $(q "$E" bench -backend cuda -p 0 -n 128 -r 3 -m /tmp/q4.gguf)"
el "8B tg128 -sync: $(q "$E" bench -backend cuda -p 0 -n 128 -r 3 -sync -m /tmp/q4.gguf)"
EMBER_CUDA_STATS=1 timeout -s KILL 100 "$E" bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/q4.gguf 2>&1 | grep -E 'device \(events|^\| q4'
