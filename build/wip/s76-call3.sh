#!/bin/sh
# s76-call3.sh (session 76): V1 (build/wip/s76-moe-v1.cu: moe_route takes moe_guess's
# experts after one pass of checks, weights scaled lane by lane; +0.8% in s76-call2)
# and V2 (the tree's moe.cu: the same, with the guess on warp 0 and the routing on warp 1
# side by side, named barriers between them, and the guess's comparison by a vote).
# Every module's PTX made here (/tmp/px: V2), V1's moe in /tmp/pv1. TestMoERouting (with
# the mended norm-scale-q4k case) on V2 and V1, TestMoERoutingNoGuess on V2, the goldens
# and deepseek2's CUDA tests on V2; a V2-Lite tg128 sweep: embedded, V1, V2; the 8B once
# on V2. Before: sh build/dev-build.sh; hold PTX, vocab, tokenizers out; carry bin/dev.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s76c3}"
nvidia-smi --query-gpu=name --format=csv,noheader
ptx_all /tmp/px
mkdir -p /tmp/pv1 && cp /tmp/px/*.ptx /tmp/px/*.cu /tmp/px/*.cuh /tmp/pv1/ && cp build/wip/s76-moe-v1.cu /tmp/pv1/moe.cu &&
	sh build/ptx-one.sh /tmp/pv1 moe || el "PV1 FAILED"
(cd /tmp/pv1 && tar cJf "$L/moe-v1.tar.xz" moe.ptx)
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMoERouting$|TestKernelNamesExist|TestMMVQueuePairedRuns' 240
tgroup 1 'TestMoERoutingNoGuess' 240
model_tests 240
export EMBER_CUDA_PTX_DIR=/tmp/pv1
tgroup 2 'TestMoERouting$' 240
unset EMBER_CUDA_PTX_DIR
wait
cp /tmp/g0.log /tmp/g1.log /tmp/g2.log "$L/"
el "tests done"
sweep 6 v2 "$E" "EMBER_CUDA_PTX_DIR=/tmp/pv1 $E" "EMBER_CUDA_PTX_DIR=/tmp/px $E" 2>&1 | tee "$L/sweep-v2.txt"
el "q4 tg128: $(tg1 q4 "EMBER_CUDA_PTX_DIR=/tmp/px $E")"
el done
