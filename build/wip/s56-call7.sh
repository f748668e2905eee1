#!/bin/sh
# s56-call7.sh (session 56): rope2_set's heads a block on the 8B, after s56-call6.sh
# found 4 ahead of 8 (526.6 / 524.1, 5 of 6): 8, 4 and 2, five rotated rounds, the
# machine still warm from call 6. Carry as for s56-call5.sh.
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s56c7}"
wait
sweep 5 q4 "$E" "EMBER_CUDA_ROPE_HEADS=4 $E" "EMBER_CUDA_ROPE_HEADS=2 $E"
el done
