#!/bin/sh
# s63-call3.sh (session 63): the landed tree (common.cuh's rms_scale, the paged tables
# kept; scatter.go reverted after call 2 measured it even). Every module's PTX made from
# the tree (each body should be the committed one); on it the name, fused, norm-router
# and conformance tests, the goldens and deepseek2's CUDA tests. Timelines of an early
# and a late decode step (EMBER_CUDA_TIMELINE 12 and 125 of tg128) of both models, to
# see which kernels grow with the position (call 1's stuck positions gained 2.5% and
# 6.9%). Then `bench -p 512 -n 128 -r 3` of V2-Lite and the 8B (the README's figures).
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s63c3}"
ptx_all /tmp/px
same_bodies /tmp/px
(sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED") &
wait
el "models and PTX ready"
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestKernelNamesExist|TestEmbeddedKernelsWait|TestFused|TestNormRouter|TestQueuedWrites|TestFeeder' 240
tgroup 1 'TestConformance$' 300
model_tests 300
wait
el "tests done"
for m in q4 v2; do
	for at in 12 125; do
		env EMBER_CUDA_PTX_DIR=/tmp/tl EMBER_CUDA_TIMELINE=$at timeout -s KILL 120 "$E" bench -backend cuda -p 0 -n 128 -r 1 \
			-m "/tmp/$m.gguf" >"$L/tl_${m}_$at.log" 2>&1
		el "$m batch $at: $(grep 'cuda timeline of' "$L/tl_${m}_$at.log")"
		grep -A12 '^kernel  *count' "$L/tl_${m}_$at.log" | grep -E 'attention|rope|mla|kernel'
	done
done
timeout -s KILL 150 "$E" bench -backend cuda -p 512 -n 128 -r 3 -m /tmp/v2.gguf >"$L/bench_v2.log" 2>&1
grep '^|' "$L/bench_v2.log" | tail -1
timeout -s KILL 150 "$E" bench -backend cuda -p 512 -n 128 -r 3 -m /tmp/q4.gguf >"$L/bench_q4.log" 2>&1
grep '^|' "$L/bench_q4.log" | tail -1
el done
