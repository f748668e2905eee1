#!/bin/sh
# s60-callA.sh (session 60): s60-call1..3 in one call. Local steps: `cp kernels/cuda/moe.cu
# build/wip/s60-moe-old.cu`, `git apply build/wip/sum-norm.patch build/wip/route-sum.patch`,
# TESTS="cuda archs deepseek2" sh build/dev-build.sh, the usual held-out files, carry bin/dev.
# Here: every module's PTX (quant.ptx and moe.ptx returned for the commit), the MoE, routing,
# norm and fusion tests, conformance, goldens and deepseek2's CUDA tests on it; the old
# moe.ptx (s60-moe-old.cu) in /tmp/old and /tmp/tlold; timelines of HEAD's form, both patches,
# and both at two routed gate/up blocks an SM; a rotated V2-Lite sweep of the five sides
# (s1 HEAD: old moe, no sum-norm; s2 route-sum; s3 sum-norm; s4 both; s5 both + ROUTE_BLOCKS=2);
# the 8B (no MoE: add_rms_norm_q8_k_1's PTX only renamed) A/B of old and new PTX.
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s60cA}"
(
	sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED"
	rm -rf /tmp/tlold && cp -r /tmp/tl /tmp/tlold && cp build/wip/s60-moe-old.cu /tmp/tlold/moe.cu && sh build/ptx-one.sh /tmp/tlold moe
) &
ptx_tests 'MoE|Route|TopK|FuseQueue|FusedAddRMSNorm|Norm1|KernelNames|EmbeddedKernelsWait|RoutingSum'
cp /tmp/px/quant.ptx /tmp/px/moe.ptx "$L/"
rm -rf /tmp/old && cp -r /tmp/px /tmp/old && cp build/wip/s60-moe-old.cu /tmp/old/moe.cu && sh build/ptx-one.sh /tmp/old moe
el "old moe ptx done"
tl tl_v2_head.log v2 EMBER_CUDA_PTX_DIR=/tmp/tlold EMBER_CUDA_NO_SUM_NORM=1
tl tl_v2_both.log v2
tl tl_v2_rb2.log v2 EMBER_CUDA_ROUTE_BLOCKS=2
O="EMBER_CUDA_PTX_DIR=/tmp/old" X="EMBER_CUDA_PTX_DIR=/tmp/px" NS="EMBER_CUDA_NO_SUM_NORM=1"
sweep 7 v2 "$O $NS $E" "$X $NS $E" "$O $E" "$X $E" "$X EMBER_CUDA_ROUTE_BLOCKS=2 $E"
ab 3 q4 "$O $NS $E" "$X $E"
el done
