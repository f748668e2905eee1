#!/bin/sh
# carve-gpu.sh: session 25's second call. pre.cu with the kernels' preferred shared
# memory carveout set (the driver's choice, all shared memory, half); the tests of the
# attention, fusion, conformance and graph paths and the CUDA goldens on the dec-pre1
# PTX; then 8B Q4_K_M and Q8_0 tg128 with EMBER_CUDA_CARVEOUT unset, 100 and 50
# alternating, V2-Lite tg128 and 8B 64 streams unset and 100.
# Carry bin/dev (build/dev-build.sh).
set -u
R=$PWD L=${OUT:-/tmp/carve-gpu}
mkdir -p "$L"
for f in bin/dev/*.xz; do [ -e "$f" ] && xz -d -f "$f"; done
chmod +x bin/dev/*
E=$R/bin/dev/ember
$E synth /tmp/q4.gguf -preset llama3.1-8b -ftype q4_k_m >/dev/null 2>&1 &
$E synth /tmp/q8.gguf -preset llama3.1-8b -ftype q8_0 >/dev/null 2>&1 &
$E synth /tmp/v2.gguf -preset deepseek-v2-lite -ftype q4_k_m >/dev/null 2>&1 &
(cd build/micro && nvcc -arch=sm_90 -std=c++17 -O3 -o /tmp/pre pre.cu; echo "pre built rc $?") &
wait
/tmp/pre
(cd inference/backend/cuda && timeout -s KILL 200 "$R/bin/dev/cuda.test" -test.run 'Attention|TestFused|Conformance$|TestGraphReplay|TestBranch|TestDec' >"$L/tests.log" 2>&1; echo "cuda tests rc $?") &
(cd inference/model/archs && timeout -s KILL 200 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA' >"$L/goldens.log" 2>&1; echo "goldens rc $?") &
wait
grep -E "^--- FAIL|^ok|^PASS|^FAIL|panic" "$L"/*.log | head -30
q() { timeout -s KILL 100 "$@" 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' '; }
for r in 1 2; do
	for m in q4 q8; do
		for c in "" 100 50; do
			echo "8B $m tg128 carve=${c:-none} $(EMBER_CUDA_CARVEOUT=$c q "$E" bench -backend cuda -m /tmp/$m.gguf -p 0 -n 128 -r 3)"
		done
	done
done
for c in "" 100; do
	echo "v2 tg128 carve=${c:-none} $(EMBER_CUDA_CARVEOUT=$c q "$E" bench -backend cuda -m /tmp/v2.gguf -p 0 -n 128 -r 3)"
done
s() { timeout -s KILL 120 "$@" 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f6; }
for c in "" 100; do
	echo "8B 64 streams carve=${c:-none} $(EMBER_CUDA_CARVEOUT=$c s "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128)"
done
echo "greedy q8 $("$E" run -backend cuda -m /tmp/q8.gguf -p "The quick brown fox" -n 48 -temp 0 2>/dev/null | md5sum)"
