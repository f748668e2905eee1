#!/bin/sh
# s62-call1.sh (for session 62; no code change, HEAD's embedded PTX): why the routed
# gate/up (mmv_route_q4_k) arrives ~0.6 us after the FFN norm completes now that the
# router runs beside the norm (s61-call2/3 timelines: it joins NormRouter's branch, so
# its launch has two incoming edges, one from each branch). Timelines and a rotated
# sweep of V2-Lite at EMBER_CUDA_BRANCH_EDGES 3 (default), 1 (the join's edge off the
# side full) and 7 (the main run's first edge off the fork full too). If the route's
# arrival does not move with the edges, the two-edge join is launched on completion
# whatever its edge types, and the way on is one launch for the norm and the router
# (NOTES, session 61's next steps). Local steps: TESTS=cuda sh build/dev-build.sh, the
# usual held-out files, carry bin/dev. ~3 minutes.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s62c1}"
(sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED") &
wait
tl tl_v2_e3.log v2
tl tl_v2_e1.log v2 EMBER_CUDA_BRANCH_EDGES=1
tl tl_v2_e7.log v2 EMBER_CUDA_BRANCH_EDGES=7
sweep 5 v2 "EMBER_CUDA_BRANCH_EDGES=1 $E" "$E" "EMBER_CUDA_BRANCH_EDGES=7 $E"
el done
