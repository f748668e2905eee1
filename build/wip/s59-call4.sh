#!/bin/sh
# s59-call4.sh: the routed gate/up with every task in flight at once: mmv_route_q4_k
# held to 128 registers (launch_bounds(128, 4)) and four blocks an SM
# (EMBER_CUDA_ROUTE_BLOCKS=4: 2,112 warps, two tasks each for V2-Lite's 4,224, both
# loaded before the first is reduced), against the committed form (three blocks, 134
# registers: 2.67 tasks a warp, the third loaded after the first is reduced). Session
# 46's ROUTE_BLOCKS 4 lost with 134 registers, where the fourth block was not resident.
# MoE tests and deepseek2's on it, then a rotated V2-Lite tg128 sweep.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s59c4}"
sh build/ptx-copy.sh /tmp/px || el "PTX FAILED"
rm -rf /tmp/lb && cp -r /tmp/px /tmp/lb
sed -i 's/__launch_bounds__(128, 3) mmv_route_q4_k/__launch_bounds__(128, 4) mmv_route_q4_k/' /tmp/lb/moe.cu
sh build/ptx-one.sh /tmp/lb moe && el "lb moe.ptx made"
wait
export EMBER_CUDA_PTX_DIR=/tmp/lb EMBER_CUDA_ROUTE_BLOCKS=4
tgroup 0 'MoE|Route|TopK' 150
(cd inference/model/deepseek2 && timeout -s KILL 150 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3 | sed 's/^/deepseek2: /') &
wait
unset EMBER_CUDA_PTX_DIR EMBER_CUDA_ROUTE_BLOCKS
sweep 6 v2 "EMBER_CUDA_PTX_DIR=/tmp/px $E" "EMBER_CUDA_PTX_DIR=/tmp/lb EMBER_CUDA_ROUTE_BLOCKS=4 $E"
el done
