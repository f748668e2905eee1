#!/bin/sh
# carve4-gpu.sh: session 25's last call, on the build whose carveout default is 44: 8B
# 64 streams, Q8_0 and Q4_K_M tg128 against EMBER_CUDA_CARVEOUT=off (the driver's
# choice), alternating; the greedy tokens of 8B Q8_0. Carry bin/dev (ember only).
set -u
R=$PWD
xz -d -f bin/dev/ember.xz; chmod +x bin/dev/ember
E=$R/bin/dev/ember
$E synth /tmp/q4.gguf -preset llama3.1-8b -ftype q4_k_m >/dev/null 2>&1 &
$E synth /tmp/q8.gguf -preset llama3.1-8b -ftype q8_0 >/dev/null 2>&1 &
wait
s() { timeout -s KILL 120 "$@" 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f6; }
q() { timeout -s KILL 100 "$@" 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' '; }
for r in 1 2 3; do
	for c in "" off; do
		echo "8B 64 streams carve=${c:-default} $(EMBER_CUDA_CARVEOUT=$c s "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128)"
	done
done
for r in 1 2; do
	for m in q8 q4; do
		for c in "" off; do
			echo "8B $m tg128 carve=${c:-default} $(EMBER_CUDA_CARVEOUT=$c q "$E" bench -backend cuda -m /tmp/$m.gguf -p 0 -n 128 -r 3)"
		done
	done
done
echo "greedy q8 $("$E" run -backend cuda -m /tmp/q8.gguf -p "The quick brown fox" -n 48 -temp 0 2>/dev/null | md5sum)"
