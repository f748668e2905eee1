#!/bin/sh
# carve5-gpu.sh: the carveout at 44 with the decode attention exempt (the default)
# against all kernels at 44 (EMBER_CUDA_CARVEOUT_EXEMPT=none) and the driver's choice
# (EMBER_CUDA_CARVEOUT=off): 8B Q8_0 tg128 and 64 streams. Carry bin/dev (ember).
set -u
R=$PWD
xz -d -f bin/dev/ember.xz; chmod +x bin/dev/ember
E=$R/bin/dev/ember
$E synth /tmp/q4.gguf -preset llama3.1-8b -ftype q4_k_m >/dev/null 2>&1 &
$E synth /tmp/q8.gguf -preset llama3.1-8b -ftype q8_0 >/dev/null 2>&1 &
wait
s() { timeout -s KILL 120 "$@" 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f6; }
q() { timeout -s KILL 100 "$@" 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' '; }
for r in 1 2; do
	echo "8B q8 tg128 default $(q "$E" bench -backend cuda -m /tmp/q8.gguf -p 0 -n 128 -r 3)"
	echo "8B q8 tg128 all44   $(EMBER_CUDA_CARVEOUT_EXEMPT=none q "$E" bench -backend cuda -m /tmp/q8.gguf -p 0 -n 128 -r 3)"
	echo "8B q8 tg128 off     $(EMBER_CUDA_CARVEOUT=off q "$E" bench -backend cuda -m /tmp/q8.gguf -p 0 -n 128 -r 3)"
	echo "8B q4 tg128 default $(q "$E" bench -backend cuda -m /tmp/q4.gguf -p 0 -n 128 -r 3)"
	echo "8B 64 streams default $(s "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128)"
	echo "8B 64 streams off     $(EMBER_CUDA_CARVEOUT=off s "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128)"
done
