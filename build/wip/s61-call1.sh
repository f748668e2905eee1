#!/bin/sh
# s61-call1.sh (for session 61): build/wip/norm-router-side.patch (the MoE router's
# product beside the FFN norm: mmv_f32_norm_1w, chained branches). Local steps first:
# `git apply build/wip/norm-router-side.patch`, TESTS="cuda archs deepseek2" sh
# build/dev-build.sh (the embedded matmul.ptx is stale: this call loads the H200's with
# EMBER_CUDA_PTX_DIR), the usual held-out files, carry bin/dev. Here: every module's PTX
# (matmul.ptx returned for the commit), TestNormRouterBits, the branch, F32 router and
# kernel-name tests, conformance, the goldens and deepseek2's CUDA tests (all logs
# returned); a rotated V2-Lite sweep against EMBER_CUDA_NO_NORM_ROUTER=1 (same PTX) and
# the timelines of both. Keep this call short: session 60 lost two calls to the machine
# being taken back.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s61c1}"
(sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED") &
ptx_all /tmp/px
cp /tmp/px/matmul.ptx "$L/"
wait
X="EMBER_CUDA_PTX_DIR=/tmp/px"
sweep 5 v2 "$X EMBER_CUDA_NO_NORM_ROUTER=1 $E" "$X $E"
tl tl_v2_nr.log v2
tl tl_v2_nonr.log v2 EMBER_CUDA_NO_NORM_ROUTER=1
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'NormRouter|Branch|KernelNames|EmbeddedKernelsWait|F32W' 200
tgroup 1 'Conformance' 200
model_tests 200
wait
cp /tmp/g0.log /tmp/g1.log "$L/"
el done
