#!/bin/sh
# s62-call2.sh (for session 62): two patches in one call, each with its own switch:
# build/wip/norm-router-merge.patch (the FFN norm and the router's logits as one launch,
# add_rms_norm_q8_k_1r: block 0 add_rms_norm_q8_k_1's body, block 1 + r logit r, so the
# routed and shared experts each follow one kernel; EMBER_CUDA_NO_NR_MERGE=1 keeps two)
# and build/wip/idwq-q8.patch (attn_k_b's heads round q_nope to Q8_0 in each block,
# mmv_idwq_q8_0, so no quant_q8 launch on the attention's main run;
# EMBER_CUDA_NO_IDWQ=1 keeps quant_q8). Local steps first: `git apply
# build/wip/norm-router-merge.patch build/wip/idwq-q8.patch`, TESTS="cuda archs
# deepseek2" sh build/dev-build.sh (every module's hash changes: a new header; this call
# loads the H200's PTX with EMBER_CUDA_PTX_DIR), the usual held-out files, carry
# bin/dev. Here: every module's PTX (ptx_all returns them in ptx.tar.xz, for the
# commit: check that only matmul.ptx's mmv_f32_norm_1w and new mmv_idwq_q8_0 and
# quant.ptx's new add_rms_norm_q8_k_1r differ in body), a rotated V2-Lite sweep of the
# four sides, the timeline with both, then the tests (TestNormRouterBits merged and not,
# TestIDWQBits, the IDW, branch, kernel-name and F32W tests, conformance, the goldens
# and deepseek2's CUDA tests). ~5-6 minutes; logs to $OUT as they go.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s62c2}"
(sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED") &
ptx_all /tmp/px
wait
X="EMBER_CUDA_PTX_DIR=/tmp/px"
sweep 5 v2 "$X EMBER_CUDA_NO_NR_MERGE=1 EMBER_CUDA_NO_IDWQ=1 $E" "$X EMBER_CUDA_NO_IDWQ=1 $E" \
	"$X EMBER_CUDA_NO_NR_MERGE=1 $E" "$X $E"
tl tl_v2_both.log v2
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'NormRouter|IDWQ|IDWBits|Branch|KernelNames|EmbeddedKernelsWait|F32W' 240
tgroup 1 'Conformance' 240
model_tests 240
wait
cp /tmp/g0.log /tmp/g1.log "$L/"
el done
