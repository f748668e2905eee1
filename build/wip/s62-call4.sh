#!/bin/sh
# s62-call4.sh (session 62): defaultBranchEdges 1 (was 3) on HEAD's embedded PTX: a
# rotated V2-Lite sweep of the new default against EMBER_CUDA_BRANCH_EDGES=3 and 5,
# seven rounds; `bench -p 512 -n 128 -r 3` of V2-Lite and the 8B (the README's figures);
# the branch and NormRouter tests, the goldens and deepseek2's CUDA tests.
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s62c4}"
wait
tgroup 0 'Branch|NormRouter|KernelNames|EmbeddedKernelsWait' 200
wait
sweep 7 v2 "$E" "EMBER_CUDA_BRANCH_EDGES=3 $E" "EMBER_CUDA_BRANCH_EDGES=5 $E"
timeout -s KILL 150 "$E" bench -backend cuda -p 512 -n 128 -r 3 -m /tmp/v2.gguf >"$L/bench_v2.log" 2>&1
grep '^|' "$L/bench_v2.log" | tail -1
timeout -s KILL 150 "$E" bench -backend cuda -p 512 -n 128 -r 3 -m /tmp/q4.gguf >"$L/bench_q4.log" 2>&1
grep '^|' "$L/bench_q4.log" | tail -1
model_tests 200
wait
cp /tmp/g0.log "$L/"
el done
