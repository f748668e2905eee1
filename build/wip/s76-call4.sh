#!/bin/sh
# s76-call4.sh (session 76): mmv_route_q4_k stages guessed weights in shared memory
# (moe.cu's ROUTE_STAGE 1: warps 0, 2 and 3 copy warp 1's first three tasks and their own
# third by cp.async while warp 1 routes; 160 registers, 43 KB of shared memory). Every
# module's PTX made here (/tmp/px); TestMoERouting, TestMoERoutingSmallGrid (five blocks:
# many tasks a warp), the goldens and deepseek2's CUDA tests on it; a V2-Lite tg128 sweep,
# the committed binary's embedded PTX against /tmp/px; the 8B once. Before: sh
# build/dev-build.sh; hold PTX, vocab, tokenizers out; carry bin/dev.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s76c4}"
nvidia-smi --query-gpu=name --format=csv,noheader
ptx_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMoERouting$|TestKernelNamesExist' 220
tgroup 1 'TestMoERoutingSmallGrid' 220
model_tests 220
unset EMBER_CUDA_PTX_DIR
wait
cp /tmp/g0.log /tmp/g1.log "$L/"
el "tests done"
sweep 6 v2 "$E" "EMBER_CUDA_PTX_DIR=/tmp/px $E" 2>&1 | tee "$L/sweep-v2.txt"
el "q4 tg128: $(tg1 q4 "EMBER_CUDA_PTX_DIR=/tmp/px $E")"
el done
