#!/bin/sh
# s62-call6.sh (session 62, the last ~450 s of device time): branch edges 5 against the
# new default 1 on c8a0e40's code (embedded PTX), ten rotated V2-Lite rounds (s62-call4:
# 5 ahead by 0.35% in 5 of 7; s62-call5: even on an erratic machine).
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s62c6}"
wait
sweep 10 v2 "$E" "EMBER_CUDA_BRANCH_EDGES=5 $E"
el done
