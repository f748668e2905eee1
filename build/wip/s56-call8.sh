#!/bin/sh
# s56-call8.sh (session 56): rope2_set at 4 heads a block on V2-Lite too (its q_pe rope:
# 16 heads of 64 dims), before making 4 the default: s56-call6.sh and s56-call7.sh had
# the 8B at 4 ahead of 8 in 10 of 11 rounds (+0.5%). Four rotated rounds; the machine
# warm from call 7 (V2-Lite synthesized here). Carry as for s56-call5.sh.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s56c8}"
wait
el "v2 written"
sweep 4 v2 "$E" "EMBER_CUDA_ROPE_HEADS=4 $E"
el done
