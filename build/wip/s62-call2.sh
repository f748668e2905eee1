#!/bin/sh
# s62-call2.sh (for session 62): three patches in one call, each with its own switch.
# build/wip/norm-router-merge.patch: the FFN norm and the router's logits as one launch
# (add_rms_norm_q8_k_1r: block 0 add_rms_norm_q8_k_1's body, block 1 + r logit r), so
# the routed and shared experts each follow one kernel (EMBER_CUDA_NO_NR_MERGE=1 keeps
# two launches, and with them no pre-routing). build/wip/preroute.patch (on top of it):
# that launch's last router block routes the token (norm_route_last: moe_route on the
# logits, ids and weights as moe_topk writes them), so the routed gate/up is
# mmv_id_q4_k over known experts, not mmv_route_q4_k (EMBER_CUDA_NO_PREROUTE=1).
# build/wip/idwq-q8.patch: attn_k_b's heads round q_nope to Q8_0 in each block
# (mmv_idwq_q8_0), no quant_q8 launch (EMBER_CUDA_NO_IDWQ=1). Local steps first: `git
# apply build/wip/norm-router-merge.patch build/wip/preroute.patch
# build/wip/idwq-q8.patch`, TESTS="cuda archs deepseek2" sh build/dev-build.sh (every
# module's hash changes: new headers; this call loads the H200's PTX with
# EMBER_CUDA_PTX_DIR), the usual held-out files, carry bin/dev. Here: every module's
# PTX (ptx_all returns them in ptx.tar.xz, for the commit: only matmul.ptx
# (mmv_f32_norm_1w, mmv_idwq_q8_0), quant.ptx (add_rms_norm_q8_k_1r) and moe.ptx (no
# body change expected) should differ in bodies), a rotated V2-Lite sweep of four sides
# (none, merge, merge + pre-routing, all three), the timeline with all, then the tests
# (TestNormRouterBits, TestPreRouteBits, TestIDWQBits, TestMoERouting, the IDW, branch,
# kernel-name and F32W tests, conformance, the goldens and deepseek2's CUDA tests,
# TestCUDANormRouter among them). ~6-7 minutes; logs to $OUT as they go.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s62c2}"
(sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED") &
ptx_all /tmp/px
wait
X="EMBER_CUDA_PTX_DIR=/tmp/px"
sweep 5 v2 "$X EMBER_CUDA_NO_NR_MERGE=1 EMBER_CUDA_NO_IDWQ=1 $E" "$X EMBER_CUDA_NO_PREROUTE=1 EMBER_CUDA_NO_IDWQ=1 $E" \
	"$X EMBER_CUDA_NO_IDWQ=1 $E" "$X $E"
tl tl_v2_all.log v2
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'NormRouter|PreRoute|IDWQ|IDWBits|Branch|KernelNames|EmbeddedKernelsWait|F32W|MoERouting' 300
tgroup 1 'Conformance' 300
model_tests 300
wait
cp /tmp/g0.log /tmp/g1.log "$L/"
el done
