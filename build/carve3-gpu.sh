#!/bin/sh
# carve3-gpu.sh: session 25's fourth call. The CUDA goldens and conformance tests with
# EMBER_CUDA_CARVEOUT=44; then 8B Q4_K_M and Q8_0 tg128 at carveouts 44, 40 and 36 and
# 44 with two-tile attention rings against the driver's choice, DeepSeek-V2-Lite
# tg128 and 8B 64 streams likewise. Carry bin/dev (build/dev-build.sh).
set -u
R=$PWD L=${OUT:-/tmp/carve3-gpu}
mkdir -p "$L"
for f in bin/dev/*.xz; do [ -e "$f" ] && xz -d -f "$f"; done
chmod +x bin/dev/*
E=$R/bin/dev/ember
$E synth /tmp/q4.gguf -preset llama3.1-8b -ftype q4_k_m >/dev/null 2>&1 &
$E synth /tmp/q8.gguf -preset llama3.1-8b -ftype q8_0 >/dev/null 2>&1 &
$E synth /tmp/v2.gguf -preset deepseek-v2-lite -ftype q4_k_m >/dev/null 2>&1 &
(cd inference/model/archs && EMBER_CUDA_CARVEOUT=44 timeout -s KILL 200 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA' >"$L/goldens.log" 2>&1; echo "goldens (carve 44) rc $?") &
(cd inference/backend/cuda && EMBER_CUDA_CARVEOUT=44 timeout -s KILL 200 "$R/bin/dev/cuda.test" -test.run 'Conformance$|TestFusedDecoderLayers' >"$L/tests.log" 2>&1; echo "conformance (carve 44) rc $?") &
wait
q() { timeout -s KILL 100 "$@" 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' '; }
for r in 1 2; do
	for m in q4 q8; do
		for c in none:0 44:0 40:0 36:0 44:2; do
			cv=${c%:*} st=${c#*:}; [ $cv = none ] && cv=; [ $st = 0 ] && st=
			echo "8B $m tg128 carve=${cv:-none} stages=${st:-auto} $(EMBER_CUDA_CARVEOUT=$cv EMBER_CUDA_DEC_STAGES=$st q "$E" bench -backend cuda -m /tmp/$m.gguf -p 0 -n 128 -r 3)"
		done
	done
done
for c in "" 44 36 ""; do
	echo "v2 tg128 carve=${c:-none} $(EMBER_CUDA_CARVEOUT=$c q "$E" bench -backend cuda -m /tmp/v2.gguf -p 0 -n 128 -r 3)"
done
s() { timeout -s KILL 120 "$@" 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f6; }
for c in "" 44 100; do
	echo "8B 64 streams carve=${c:-none} $(EMBER_CUDA_CARVEOUT=$c s "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128)"
done
