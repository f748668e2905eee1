#!/bin/sh
# s67-call6.sh (session 67): mmv_route_q4_k's grid between two and three blocks an SM
# (EMBER_CUDA_ROUTE_GRID: 330 and 360 blocks against the default 396 on 132 SMs), which
# leaves room on some SMs for the shared experts' kernels while the routed blocks
# route: rotated V2-Lite tg128 rounds. Before the call: TESTS=cuda sh
# build/dev-build.sh, hold kernels/cuda/*.ptx, testdata/vocab and testdata/tokenizers
# out; carry bin/dev. ~190 s with a cold start.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s67c6}"
wait
el "models ready"
sweep 3 v2 "$E" "EMBER_CUDA_ROUTE_GRID=330 $E" "EMBER_CUDA_ROUTE_GRID=360 $E" >"$L/sweep.txt" 2>&1
cat "$L/sweep.txt"
