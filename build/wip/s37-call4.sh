#!/bin/sh
# s37-call4.sh: one stream through the engine at depth. tg128 (flat cache, empty context)
# reads 518 tok/s but one stream of 512 + 128 through the engine 387: decode at prompt
# lengths 16, 512, 2048 and 8192 (greedy, 64 tokens), 8B and V2-Lite; then
# EMBER_CUDA_PROFILE (each launch synchronized and timed) over 16 + 64 and 512 + 64, to
# see which kernels grow. Committed PTX. bin/dev built with TESTS=" ".
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s37c4}"
wait
for pl in 16 512 2048 8192; do
	el "8B 1 stream p$pl: $(s "$E" bench -backend cuda -streams 1 -p $pl -n 64 -m /tmp/q4.gguf)"
done
for pl in 16 512 2048; do
	el "V2 1 stream p$pl: $(s "$E" bench -backend cuda -streams 1 -p $pl -n 64 -m /tmp/v2.gguf)"
done
el "8B tg64 flat: $(q "$E" bench -backend cuda -p 0 -n 64 -r 3 -m /tmp/q4.gguf)"
for pl in 16 512; do
	EMBER_CUDA_PROFILE=1 timeout -s KILL 120 "$E" bench -backend cuda -streams 1 -p $pl -n 64 -warmup=false -m /tmp/q4.gguf >/tmp/prof$pl.out 2>/tmp/prof$pl.err
	el "profile p$pl (rc $?):"
	grep -v '^$' /tmp/prof$pl.err | head -40
done
