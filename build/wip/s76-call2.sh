#!/bin/sh
# s76-call2.sh (session 76): moe_route takes moe_guess's experts after one pass of
# checks (no NaN score, each guessed expert above the next, every other below the last)
# instead of k warp-argmax rounds, and normalises and scales the weights lane by lane.
# Every module's PTX made here (/tmp/px; only moe.ptx should change), TestMoERouting (the
# fused path against routeRef and the unfused launches, bit for bit; ties cases fall back
# to the rounds), TestMoERoutingNoGuess, the goldens and deepseek2's CUDA tests on it; a
# V2-Lite tg128 sweep, the committed binary's embedded PTX against /tmp/px; the 8B once.
# Before: sh build/dev-build.sh; hold PTX, vocab, tokenizers out; carry bin/dev.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s76c2}"
nvidia-smi --query-gpu=name --format=csv,noheader
ptx_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMoERouting$|TestKernelNamesExist|TestMMVQueuePairedRuns' 240
tgroup 1 'TestMoERoutingNoGuess' 240
model_tests 240
unset EMBER_CUDA_PTX_DIR
wait
cp /tmp/g0.log /tmp/g1.log "$L/"
el "tests done"
sweep 6 v2 "$E" "EMBER_CUDA_PTX_DIR=/tmp/px $E" 2>&1 | tee "$L/sweep-v2.txt"
el "q4 tg128: $(tg1 q4 "EMBER_CUDA_PTX_DIR=/tmp/px $E")"
el done
