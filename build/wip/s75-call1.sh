#!/bin/sh
# s75-call1.sh (session 75): mmv_route's guessed loads in the one form kept (warps 1-3
# their first two tasks by the guess while warp 0 routes; s74-call1 measured it +6.1%
# over every warp's first task, which was 0.7% behind no guess). Every module's PTX made
# here (ptx.tar.xz), the routing tests with and without the guess, the goldens and
# deepseek2's CUDA tests on it, a V2-Lite tg128 sweep with the guess on and off, the 8B
# once. Before: sh build/dev-build.sh; hold PTX, vocab, tokenizers out; carry bin/dev.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s75c1}"
ptx_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMoERouting$|TestMMVQueuePairedRuns|TestKernelNamesExist|TestEmbeddedKernelsWait' 240
tgroup 1 'TestMoERoutingNoGuess' 240
model_tests 240
wait
cp /tmp/g0.log /tmp/g1.log "$L/"
el "tests done"
P="EMBER_CUDA_PTX_DIR=/tmp/px $E"
sweep 6 v2 "$P" "EMBER_CUDA_ROUTE_SPEC=off $P" 2>&1 | tee "$L/sweep-v2.txt"
el "q4 tg128: $(tg1 q4 "$P")"
el done
