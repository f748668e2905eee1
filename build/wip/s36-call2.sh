#!/bin/sh
# s36-call2.sh: decoding a step ahead of the host (backend.Feeder). TestFeeder and
# TestArgMax (cuda.test), TestFedDecodeCUDA (archs.test: every golden model, flat and
# paged caches, ids and last logits against reading each step's id), then tg128 ahead
# (the bench's default) against -sync, alternating, for 8B Q4_K_M and V2-Lite, and the
# event clock of an ahead run. bin/dev built with TESTS="cuda archs". ~4 minutes.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s36c2}"
tgroup 0 'TestFeeder|TestArgMax' 120
(cd inference/model/archs && timeout -s KILL 200 "$R/bin/dev/archs.test" -test.v -test.run 'TestFedDecodeCUDA' 2>&1 | grep -E '^(--- |ok|FAIL|PASS)|fed_cuda' | tail -40) &
wait
el tests done
for m in q4 v2; do
	for r in 1 2; do
		el "$m tg128 ahead: $(q "$E" bench -backend cuda -p 0 -n 128 -r 3 -m /tmp/$m.gguf)"
		el "$m tg128 sync:  $(q "$E" bench -backend cuda -p 0 -n 128 -r 3 -sync -m /tmp/$m.gguf)"
	done
	EMBER_CUDA_STATS=1 timeout -s KILL 100 "$E" bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf >$L/stats-$m.txt 2>&1
	grep -E 'device \(events|^\| ' $L/stats-$m.txt
done
for c in 0 256; do
	el "q4 tg128 ahead chunk $c: $(EMBER_CUDA_CHUNK=$c q "$E" bench -backend cuda -p 0 -n 128 -r 3 -m /tmp/q4.gguf)"
	el "v2 tg128 ahead chunk $c: $(EMBER_CUDA_CHUNK=$c q "$E" bench -backend cuda -p 0 -n 128 -r 3 -m /tmp/v2.gguf)"
done
