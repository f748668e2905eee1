#!/bin/sh
# s56-call6.sh (session 56): two settings of the 8B's batch-1 path chosen long ago, in
# one rotated sweep (gpu-setup.sh's sweep, its first use): the Q4_K (and Q6_K) mat-vecs
# at a 30% shared-memory carveout (session 26: 466.7 against 464.1 at 44, one call,
# never paired since) and rope2_set at 4 heads a block (ropeHeads 8). 8B Q4_K_M tg128,
# the final build of s56-call5.sh (embedded PTX). Local steps and carry as for
# s56-call5.sh.
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s56c6}"
wait
C="EMBER_CUDA_CARVEOUT=30 EMBER_CUDA_CARVEOUT_KERNELS"
sweep 6 q4 "$E" "$C=mmv_q4_k,mmv_multi $E" "$C=mmv_q4_k,mmv_multi,mmv_q6_k $E" "EMBER_CUDA_ROPE_HEADS=4 $E"
el done
