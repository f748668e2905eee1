#!/bin/sh
# s60-call1.sh (for session 60): does the shared experts' down fit into the routing's
# window? With three routed gate/up blocks an SM (the default) the shared down cannot
# become resident until mmv_route_q4_k ends (session 59's timeline: it starts ~10 us
# late and runs beside the routed downs); at two (EMBER_CUDA_ROUTE_BLOCKS=2, ~35K of the
# 64K registers) it fits beside them, and may run while warp 0 of each block routes
# (~4 us, HBM idle). Timelines of both (the done column: mmv_route_q4_k, mmv_id_q8_0,
# the shared down), then a rotated V2-Lite tg128 sweep. No code change: bin/dev
# (TESTS="cuda") and the usual held-out files.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s60c1}"
(sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED") &
wait
for rb in 3 2; do
	EMBER_CUDA_ROUTE_BLOCKS=$rb EMBER_CUDA_PTX_DIR=/tmp/tl EMBER_CUDA_TIMELINE=40 timeout -s KILL 120 $E bench -backend cuda -p 0 -n 64 -r 1 \
		-m /tmp/v2.gguf >"$L/tl_v2_rb$rb.log" 2>&1
	el "route blocks $rb: $(grep 'cuda timeline' "$L/tl_v2_rb$rb.log" | tr '\n' ' ')"
	grep -A8 '^kernel  *count' "$L/tl_v2_rb$rb.log"
done
sweep 6 v2 "$E" "EMBER_CUDA_ROUTE_BLOCKS=2 $E"
el done
