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
tl tl_v2_rb3.log v2 EMBER_CUDA_ROUTE_BLOCKS=3
tl tl_v2_rb2.log v2 EMBER_CUDA_ROUTE_BLOCKS=2
sweep 6 v2 "$E" "EMBER_CUDA_ROUTE_BLOCKS=2 $E"
el done
