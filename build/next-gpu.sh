#!/bin/sh
# next-gpu.sh: session 22's GPU call. The side-branch tests (TestBranchedGraph: a
# branched graph against the same step as a chain), the graph, fused and conformance
# tests, deepseek2's GPU tests and the CUDA goldens; then DeepSeek-V2-Lite Q4_K_M tg128
# with its branches (shared experts, MLA cache write) against EMBER_CUDA_NO_BRANCH=1 (one chain),
# alternating, the stats line (graphs built with branches) and the greedy tokens of both.
# Carry bin/dev (ember, cuda.test, archs.test, deepseek2.test as .xz); ~6 minutes.
set -u
R=$PWD
for f in bin/dev/*.xz; do [ -e "$f" ] && xz -d -f "$f"; done
chmod +x bin/dev/*
E=$R/bin/dev/ember L=${OUT:-/tmp/next-gpu}
mkdir -p "$L"
M=/tmp/v2.gguf
[ -f $M ] || $E synth $M -preset deepseek-v2-lite -ftype q4_k_m >"$L/synth.log" 2>&1 &
(cd inference/backend/cuda && timeout -s KILL 300 "$R/bin/dev/cuda.test" -test.run 'TestBranch|TestGraphReplay|TestFused|Conformance$' -test.v >"$L/tests.log" 2>&1; echo "cuda tests rc $?") &
(cd inference/model/deepseek2 && timeout -s KILL 300 "$R/bin/dev/deepseek2.test" -test.v >"$L/ds2.log" 2>&1; echo "deepseek2 tests rc $?") &
(cd inference/model/archs && timeout -s KILL 300 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA' >"$L/goldens.log" 2>&1; echo "goldens rc $?") &
wait
grep -E "^--- FAIL|^ok|^PASS|^FAIL|panic" "$L"/*.log | head -30
grep -E -A2 "^--- (PASS|SKIP|FAIL).*Branch" "$L/tests.log"
b() { timeout -s KILL 90 "$@" 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8; }
for r in 1 2 3; do
	echo "v2 branch   tg128 $(b $E bench -backend cuda -m $M -p 0 -n 128 -r 3)"
	echo "v2 nobranch tg128 $(EMBER_CUDA_NO_BRANCH=1 b $E bench -backend cuda -m $M -p 0 -n 128 -r 3)"
done
EMBER_CUDA_STATS=1 timeout 90 $E bench -backend cuda -m $M -p 0 -n 128 -r 1 2>&1 | grep -E "cuda stats" | head -3
timeout 90 $E run -backend cuda -m $M -p "The quick brown fox" -n 48 >"$L/run-branch.txt" 2>/dev/null
EMBER_CUDA_NO_BRANCH=1 timeout 90 $E run -backend cuda -m $M -p "The quick brown fox" -n 48 >"$L/run-chain.txt" 2>/dev/null
wc -c "$L"/run-*.txt
cmp "$L/run-branch.txt" "$L/run-chain.txt" && echo "greedy tokens: the same"
