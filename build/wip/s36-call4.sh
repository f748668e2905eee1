#!/bin/sh
# s36-call4.sh: Scratch.WriteKept (fewer host copies a step) against the same binary
# built with a switch EMBER_NO_KEPT=1 (the dev build only, not committed), V2-Lite and 8B
# tg128, alternating; the event clock of a tg128 ahead; one stream of the serving bench
# (the engine's paged steps) ahead against -sync. ~4 minutes.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s36c4}"
wait
for r in 1 2 3; do
	el "v2 tg128 kept: $(q "$E" bench -backend cuda -p 0 -n 128 -r 3 -m /tmp/v2.gguf)"
	el "v2 tg128 no-kept: $(q env EMBER_NO_KEPT=1 "$E" bench -backend cuda -p 0 -n 128 -r 3 -m /tmp/v2.gguf)"
done
el "q4 tg128 kept: $(q "$E" bench -backend cuda -p 0 -n 128 -r 3 -m /tmp/q4.gguf)"
el "q4 tg128 no-kept: $(q env EMBER_NO_KEPT=1 "$E" bench -backend cuda -p 0 -n 128 -r 3 -m /tmp/q4.gguf)"
for m in q4 v2; do
	EMBER_CUDA_STATS=1 timeout -s KILL 100 "$E" bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf 2>&1 | grep -E 'device \(events|^\| [a-z]'
	for r in 1 2; do
		el "$m 1 stream (128+128) kept: $(s "$E" bench -m /tmp/$m.gguf -backend cuda -streams 1 -p 128 -n 128)"
		el "$m 1 stream no-kept: $(s env EMBER_NO_KEPT=1 "$E" bench -m /tmp/$m.gguf -backend cuda -streams 1 -p 128 -n 128)"
		el "$m 1 stream sync: $(s "$E" bench -m /tmp/$m.gguf -backend cuda -streams 1 -p 128 -n 128 -sync)"
	done
done
