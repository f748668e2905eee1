#!/bin/sh
# s60-call2.sh (for session 60): route-sum.patch (moe_route's softmax sum by the warp
# where that is exact). Local steps first: `cp kernels/cuda/moe.cu build/wip/s60-moe-old.cu`
# (the unpatched source, carried as an untracked file: the device has no .git), `git
# apply build/wip/route-sum.patch`, then
# TESTS="cuda archs deepseek2" sh build/dev-build.sh (the embedded moe.ptx is stale:
# this call loads the H200's with EMBER_CUDA_PTX_DIR), the usual held-out files, carry
# bin/dev. Here: every module's PTX (moe.ptx returned for the commit), the MoE, routing
# and conformance tests, the goldens and deepseek2's CUDA tests on it, the timeline's
# done column for mmv_route_q4_k with and without, and a rotated tg128 sweep against the
# unpatched moe.ptx (made here from s60-moe-old.cu into /tmp/old).
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s60c2}"
ptx_tests 'MoE|Route|TopK|RoutingSum'
cp /tmp/px/moe.ptx "$L/moe.ptx"
rm -rf /tmp/old && cp -r /tmp/px /tmp/old && cp build/wip/s60-moe-old.cu /tmp/old/moe.cu && sh build/ptx-one.sh /tmp/old moe
(sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED") &
wait
rm -rf /tmp/tlold && cp -r /tmp/tl /tmp/tlold && cp build/wip/s60-moe-old.cu /tmp/tlold/moe.cu && sh build/ptx-one.sh /tmp/tlold moe
tl tl_v2_new.log v2
tl tl_v2_old.log v2 EMBER_CUDA_PTX_DIR=/tmp/tlold
sweep 6 v2 "EMBER_CUDA_PTX_DIR=/tmp/old $E" "EMBER_CUDA_PTX_DIR=/tmp/px $E"
el done
