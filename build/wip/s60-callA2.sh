#!/bin/sh
# s60-callA2.sh: s60-callA.sh's second half, on the PTX s60-callA1.sh left in /tmp (made
# again if the machine is a fresh one): timelines of HEAD's form, both patches, and both
# at two routed gate/up blocks an SM; the rotated V2-Lite sweep of the five sides (s1
# HEAD: old moe, no sum-norm; s2 route-sum; s3 sum-norm; s4 both; s5 both +
# ROUTE_BLOCKS=2); the 8B A/B of old and new PTX.
set -u
export MODELS="v2 q4"
[ -s /tmp/old/moe.ptx ] && [ -s /tmp/tlold/moe.ptx ] || sh build/wip/s60-callA1.sh >/dev/null 2>&1
. build/gpu-setup.sh "${OUT:-/tmp/s60cA}"
wait
tl tl_v2_head.log v2 EMBER_CUDA_PTX_DIR=/tmp/tlold EMBER_CUDA_NO_SUM_NORM=1
tl tl_v2_both.log v2
tl tl_v2_rb2.log v2 EMBER_CUDA_ROUTE_BLOCKS=2
O="EMBER_CUDA_PTX_DIR=/tmp/old" X="EMBER_CUDA_PTX_DIR=/tmp/px" NS="EMBER_CUDA_NO_SUM_NORM=1"
sweep ${ROUNDS:-7} v2 "$O $NS $E" "$X $NS $E" "$O $E" "$X $E" "$X EMBER_CUDA_ROUTE_BLOCKS=2 $E"
ab 3 q4 "$O $NS $E" "$X $E"
el done
