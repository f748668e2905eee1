#!/bin/sh
# s75-call2.sh (session 75): the committed tree's binary (moe.ptx with the guessed loads
# embedded, no EMBER_CUDA_PTX_DIR): the embedded kernels' tests, the goldens and
# deepseek2's CUDA tests, a V2-Lite tg128 sweep of the default against
# EMBER_CUDA_ROUTE_SPEC=off and against two blocks an SM for the fused routing
# (EMBER_CUDA_ROUTE_GRID=264, the default being three on 132 SMs), the 8B once.
# Before: sh build/dev-build.sh; hold vocab and tokenizers out; carry bin/dev.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s75c2}"
tgroup 0 'TestKernelNamesExist|TestEmbeddedKernelsWait|TestMMVQueuePairedRuns|TestVBQueue|TestAbsorbQueue' 120
model_tests 150
wait
el "tests done"
sweep 5 v2 "$E" "EMBER_CUDA_ROUTE_SPEC=off $E" "EMBER_CUDA_ROUTE_GRID=264 $E" 2>&1 | tee "$L/sweep-v2.txt"
el "q4 tg128: $(tg1 q4 "$E")"
el done
