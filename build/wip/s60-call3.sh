#!/bin/sh
# s60-call3.sh (for session 60): sum-norm.patch (a decode row's moe_sum_add and the next
# norm as one launch, moe_sum_add_norm_q8_k_1). Local steps first: `git apply
# build/wip/sum-norm.patch` (route-sum.patch may be applied too: they touch different
# files), then TESTS="cuda archs deepseek2" sh build/dev-build.sh (the embedded
# quant.ptx is stale: this call loads the H200's with EMBER_CUDA_PTX_DIR), the usual
# held-out files, carry bin/dev. Here: every module's PTX (quant.ptx and moe.ptx
# returned for the commit), TestMoERouting (the fused layer end against the unfused
# bits), the norm, fusion and kernel-name tests, conformance, the goldens and deepseek2's
# CUDA tests; the timeline with and without (EMBER_CUDA_NO_SUM_NORM=1: the same PTX);
# a rotated V2-Lite tg128 sweep of the two, and the 8B once each (it has no MoE: even).
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s60c3}"
ptx_tests 'MoE|Route|TopK|FuseQueue|FusedAddRMSNorm|Norm1|KernelNames|EmbeddedKernelsWait|RoutingSum'
cp /tmp/px/quant.ptx /tmp/px/moe.ptx "$L/"
(sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED") &
wait
tl tl_v2_sn.log v2
tl tl_v2_nosn.log v2 EMBER_CUDA_NO_SUM_NORM=1
sweep 6 v2 "EMBER_CUDA_PTX_DIR=/tmp/px $E" "EMBER_CUDA_PTX_DIR=/tmp/px EMBER_CUDA_NO_SUM_NORM=1 $E"
el "8B tg128 fused / not: $(tg1 q4 "EMBER_CUDA_PTX_DIR=/tmp/px $E") / $(tg1 q4 "EMBER_CUDA_PTX_DIR=/tmp/px EMBER_CUDA_NO_SUM_NORM=1 $E")"
el done
