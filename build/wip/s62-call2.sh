#!/bin/sh
# s62-call2.sh (for session 62): build/wip/norm-router-merge.patch, the FFN norm and the
# router's logits as one launch (add_rms_norm_q8_k_1r: block 0 add_rms_norm_q8_k_1's
# body, block 1 + r logit r), so the routed and shared experts each follow one kernel.
# Local steps first: `git apply build/wip/norm-router-merge.patch`, TESTS="cuda archs
# deepseek2" sh build/dev-build.sh (every module's hash changes: a new header, and
# warps4_meet moved to common.cuh; this call loads the H200's PTX with
# EMBER_CUDA_PTX_DIR), the usual held-out files, carry bin/dev. Here: every module's
# PTX (ptx_all returns them in ptx.tar.xz, for the commit: check that only matmul.ptx's
# mmv_f32_norm_1w and quant.ptx's new kernel differ in body; every module's first line
# changes), TestNormRouterBits (merged and unmerged: the
# same bits in every output), the branch/kernel-name/F32W tests, conformance, the
# goldens and deepseek2's CUDA tests (TestCUDANormRouter takes the merged launch); a
# rotated V2-Lite sweep against EMBER_CUDA_NO_NR_MERGE=1 and the timeline of each.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s62c2}"
(sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED") &
ptx_all /tmp/px
wait
X="EMBER_CUDA_PTX_DIR=/tmp/px"
sweep 5 v2 "$X EMBER_CUDA_NO_NR_MERGE=1 $E" "$X $E"
tl tl_v2_merge.log v2
tl tl_v2_nomerge.log v2 EMBER_CUDA_NO_NR_MERGE=1
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'NormRouter|Branch|KernelNames|EmbeddedKernelsWait|F32W' 200
tgroup 1 'Conformance' 200
model_tests 200
wait
cp /tmp/g0.log /tmp/g1.log "$L/"
el done
