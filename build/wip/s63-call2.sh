#!/bin/sh
# s63-call2.sh (session 63): the small host writes through scatter_u32 (scatter.go) and
# the paged tables kept (model/layers.go). Every module's PTX made from the tree (only
# ops.ptx's body should change: scatter_u32 added); on it the write, feeder, sampling,
# branch and name tests, conformance, the goldens, deepseek2's and the engine's CUDA
# tests; tg128 with EMBER_CUDA_STATS; rotated rounds of scatter on against
# EMBER_CUDA_NO_SCATTER=1 (both with the tables kept), the 8B and V2-Lite.
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s63c2}"
ptx_all /tmp/px
same_bodies /tmp/px ops
wait
el "models ready"
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestScatterWrites|TestQueuedWrites|TestFeeder|TestSampleAhead|TestArgMax|TestKernelNamesExist|TestEmbeddedKernelsWait|TestBranch|TestNormRouter' 240
tgroup 1 'Conformance' 300
model_tests 300
(cd inference/engine && timeout -s KILL 300 "$R/bin/dev/engine.test" -test.v -test.run 'CUDA' 2>&1 | grep -E -- '^(--- |ok|FAIL|PASS)' | tail -12) &
wait
grep -E 'scatter_u32 launches' /tmp/g0.log
cp /tmp/g0.log /tmp/g1.log "$L/" 2>/dev/null
el "tests done"
for m in q4 v2; do
	for side in "" "EMBER_CUDA_NO_SCATTER=1"; do
		env EMBER_CUDA_STATS=1 $side timeout -s KILL 100 "$E" bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf >"$L/stats_$m$side.log" 2>&1
		el "$m [$side]: $(grep -E 'device \(events|scatters' "$L/stats_$m$side.log" | tr '\n' ' ' | cut -c1-400)"
		grep '^| ' "$L/stats_$m$side.log" | tail -1
	done
done
sweep 6 q4 "$E" "EMBER_CUDA_NO_SCATTER=1 $E"
sweep 6 v2 "$E" "EMBER_CUDA_NO_SCATTER=1 $E"
el done
