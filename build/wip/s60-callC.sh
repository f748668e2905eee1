#!/bin/sh
# s60-callC.sh: sum-norm as fixed after callB (moe_sum_add_norm_q8_k_1 took 9.8 us
# against 2.0 + 2.9: each column's routed sum was stored before the next column's loads,
# which then waited behind it; now every load first, k unrolled to 8, the weights loaded
# once). Every module's PTX (quant.ptx returned), a rotated V2-Lite sweep against
# EMBER_CUDA_NO_SUM_NORM=1 (no timeline: ~380 s of device time were left), then (when the fused side wins) TestMoERouting
# and the norm and fusion tests.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s60cC}"
ptx_all /tmp/px
cp /tmp/px/quant.ptx "$L/"
wait
X="EMBER_CUDA_PTX_DIR=/tmp/px"
sweep 3 v2 "$X EMBER_CUDA_NO_SUM_NORM=1 $E" "$X $E" | tee /tmp/sw.log
r=$(grep -o 'B/A [0-9.]*' /tmp/sw.log | tail -1 | cut -d' ' -f2)
if awk "BEGIN{exit !($r > 1.0)}"; then
	export EMBER_CUDA_PTX_DIR=/tmp/px
	tgroup 0 '^TestMoERouting$' 120
	tgroup 1 'FuseQueue|FusedAddRMSNorm|Norm1|KernelNames|EmbeddedKernelsWait' 120
	wait
	cp /tmp/g0.log /tmp/g1.log "$L/"
fi
el done
