#!/bin/sh
# s36-call3.sh: the engine's steps ahead of the host on the GPU. TestAheadCUDA
# (engine.test: greedy requests ending in every way, 8 and 1 parallel, ahead against
# SyncSteps), TestFedDecodeCUDA again (no chunk flushes while ids are on their way),
# then tg128 ahead against -sync (8B Q4_K_M, V2-Lite) and 64 streams of 512 + 128 ahead
# against -sync. bin/dev built with TESTS="engine archs". ~5 minutes.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s36c3}"
(cd inference/engine && timeout -s KILL 150 "$R/bin/dev/engine.test" -test.v -test.run 'TestAheadCUDA' 2>&1 | grep -E '^(\s*--- |ok|FAIL|PASS)|ahead_test' | tail -12) &
(cd inference/model/archs && timeout -s KILL 200 "$R/bin/dev/archs.test" -test.run 'TestFedDecodeCUDA' 2>&1 | tail -3) &
wait
el tests done
for m in q4 v2; do
	for r in 1 2; do
		el "$m tg128 ahead: $(q "$E" bench -backend cuda -p 0 -n 128 -r 3 -m /tmp/$m.gguf)"
		el "$m tg128 sync:  $(q "$E" bench -backend cuda -p 0 -n 128 -r 3 -sync -m /tmp/$m.gguf)"
	done
done
for m in q4 v2; do
	el "$m 64 streams ahead: $(s "$E" bench -m /tmp/$m.gguf -backend cuda -streams 64 -p 512 -n 128)"
	el "$m 64 streams sync:  $(s "$E" bench -m /tmp/$m.gguf -backend cuda -streams 64 -p 512 -n 128 -sync)"
done
