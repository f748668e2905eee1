#!/bin/sh
# s60-callA1.sh: the first half of a call that was taken back twice (s60-callA, deleted;
# the whole): every module's PTX (quant.ptx, moe.ptx returned), the tests on it, the timeline
# PTX and the old moe.ptx built beside them for s60-callB.sh.
# build/wip/s60-moe-old.cu (not kept) was 907560b's kernels/cuda/moe.cu: `git show
# 907560b:kernels/cuda/moe.cu >build/wip/s60-moe-old.cu` to run this again.
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
