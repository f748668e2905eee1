#!/bin/sh
# s62-call3.sh (session 62): session 61's step 2 diagnostic on call 2's binary (the three
# wip patches applied, each off by its switch). The merge alone was even in call 2
# (712.9 against 716.0, 0 of 5), pre-routing lost 3%, idwq 0.8%. Timelines: the base
# (no merge, no idwq) at EMBER_CUDA_BRANCH_EDGES 3, 1 and 7, and the merge alone, to see
# whether the routed gate/up's late arrival moves with the join's edge types and where
# the merged launch's time goes; then a rotated sweep of the base at edges 3, 1 and 7.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s62c3}"
(sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED") &
ptx_all /tmp/px
wait
B="EMBER_CUDA_NO_NR_MERGE=1 EMBER_CUDA_NO_IDWQ=1"
tl tl_v2_e3.log v2 $B
tl tl_v2_e1.log v2 $B EMBER_CUDA_BRANCH_EDGES=1
tl tl_v2_e7.log v2 $B EMBER_CUDA_BRANCH_EDGES=7
tl tl_v2_merge.log v2 EMBER_CUDA_NO_PREROUTE=1 EMBER_CUDA_NO_IDWQ=1
X="EMBER_CUDA_PTX_DIR=/tmp/px $B"
sweep 5 v2 "$X $E" "$X EMBER_CUDA_BRANCH_EDGES=1 $E" "$X EMBER_CUDA_BRANCH_EDGES=7 $E"
el done
