#!/bin/sh
# carve2-gpu.sh: session 25's third call. The attention, fusion, conformance and graph
# tests on the dec-pre1 PTX; then 8B Q4_K_M and Q8_0 tg128 over carveouts that put
# every kernel of a step in one shared memory configuration (percent of 228 KiB,
# rounded up to a configuration: 28 -> 64 KiB, 44 -> 100, 57 -> 132), with the decode
# attention's rings cut to fit (EMBER_CUDA_DEC_STAGES) where needed.
# Carry bin/dev (build/dev-build.sh).
set -u
R=$PWD L=${OUT:-/tmp/carve2-gpu}
mkdir -p "$L"
for f in bin/dev/*.xz; do [ -e "$f" ] && xz -d -f "$f"; done
chmod +x bin/dev/*
E=$R/bin/dev/ember
$E synth /tmp/q4.gguf -preset llama3.1-8b -ftype q4_k_m >/dev/null 2>&1 &
$E synth /tmp/q8.gguf -preset llama3.1-8b -ftype q8_0 >/dev/null 2>&1 &
(cd inference/backend/cuda && timeout -s KILL 280 "$R/bin/dev/cuda.test" -test.v -test.run 'TestBatchedDecodeAttention|TestDecodeAttention|TestFusedAttentionQ8K|TestFusedDecoderLayers|Conformance$|TestGraphReplay|TestPagedAttention|TestFusedQ8KHalf' >"$L/tests.log" 2>&1; echo "cuda tests rc $?") &
wait
grep -E "^--- |^ok|^PASS|^FAIL|panic" "$L"/tests.log | head -30
q() { timeout -s KILL 100 "$@" 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' '; }
for r in 1 2; do
	for m in q4 q8; do
		for c in none:0 44:0 57:0 28:3 28:2 none:2; do
			cv=${c%:*} st=${c#*:}; [ $cv = none ] && cv=; [ $st = 0 ] && st=
			echo "8B $m tg128 carve=${cv:-none} stages=${st:-auto} $(EMBER_CUDA_CARVEOUT=$cv EMBER_CUDA_DEC_STAGES=$st q "$E" bench -backend cuda -m /tmp/$m.gguf -p 0 -n 128 -r 3)"
		done
	done
done
