#!/bin/sh
# s67-call1.sh (written in session 66, not yet run): two variants of the latent
# attention against the tree's (session 66's, the query laid out for pass 1):
# s67-vPR (the probabilities formed once after the sum, a barrier, P V reading them:
# each of P V's 72 chunk lanes now forms its position's probability itself) and s67-vQ2L
# (the query in registers in threads with a position in the tile, on L's layout). Their
# bits tests, the micro-benchmark, rotated tg128 rounds of V2-Lite against the tree's
# kernel compiled here. Before the call: TESTS=cuda sh build/dev-build.sh, hold
# kernels/cuda/*.ptx, testdata/vocab and testdata/tokenizers out; carry bin/dev.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s67c1}"
ptx_all /tmp/px
for x in PR Q2L; do patched $x build/wip/s67-v$x.patch; done
wait
el "models ready"
{
	bits_tests 2 /tmp/vPR
	bits_tests 3 /tmp/vQ2L
	wait
} >"$L/tests.txt" 2>&1
cat "$L/tests.txt"
sweep 4 v2 "EMBER_CUDA_PTX_DIR=/tmp/px $E" "EMBER_CUDA_PTX_DIR=/tmp/vPR $E" "EMBER_CUDA_PTX_DIR=/tmp/vQ2L $E" >"$L/sweep.txt" 2>&1
cat "$L/sweep.txt"
sh build/shortattn-gpu.sh build/wip/s67-vPR.patch build/wip/s67-vQ2L.patch >"$L/shortattn.txt" 2>&1
grep -E "^==|slope|n 126|n  13|n   1:" "$L/shortattn.txt"
el done
