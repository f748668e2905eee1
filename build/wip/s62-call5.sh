#!/bin/sh
# s62-call5.sh (session 62): build/wip/idwq-q8.patch alone on c8a0e40 (branch edges 1).
# Call 2 measured it only on top of the norm-router merge and pre-routing (-0.8%), while
# its timeline showed the attention's chain ~0.9 us shorter a layer. Every module's PTX
# (ptx_all; mv1.cuh changes every hash), TestIDWQBits and the queue, kernel-name, F32W and
# conformance tests, the goldens and deepseek2's CUDA tests on it, then a rotated V2-Lite
# sweep of seven rounds: idwq off (EMBER_CUDA_NO_IDWQ=1), on, and off at branch edges 5.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s62c5}"
ptx_all /tmp/px
wait
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'IDWQ|IDWBits|MMVQueue|Branch|KernelNames|EmbeddedKernelsWait|F32W|NormRouter' 200
tgroup 1 'Conformance' 200
model_tests 200
wait
cp /tmp/g0.log /tmp/g1.log "$L/"
sweep 7 v2 "EMBER_CUDA_NO_IDWQ=1 $E" "$E" "EMBER_CUDA_NO_IDWQ=1 EMBER_CUDA_BRANCH_EDGES=5 $E"
el done
