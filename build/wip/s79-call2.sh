#!/bin/sh
# s79-call2.sh: s79-call1.sh shorter again (three rounds, tests cut at 150 s) (session 76's ROUTE_STAGE
# kernel under one carveout) and with four rounds a sweep, to fit a shorter call after
# session 79 lost one call to a machine taken back mid-run. Prepare as s77-call1.sh says
# (git apply build/wip/s77.patch; sh build/dev-build.sh; hold PTX, vocab, tokenizers
# out; carry bin/dev).
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s79c2}"
nvidia-smi --query-gpu=name --format=csv,noheader
ptx_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMoERouting|TestMoEDownsLateIDs|TestMultiTwoBits|TestIDWBits|TestKernelNamesExist|TestMatMulShared' 150
model_tests 150
unset EMBER_CUDA_PTX_DIR
wait
el "tests done"
P="EMBER_CUDA_PTX_DIR=/tmp/px"
sweep 3 q4 "$P EMBER_CUDA_MULTI_TWO=0 $E" "$P $E" 2>&1 | tee "$L/sweep-q4.txt"
sweep 3 v2 "$P EMBER_CUDA_LATE_IDS=0 $E" "$P $E" "EMBER_CUDA_LATE_IDS=0 $E" 2>&1 | tee "$L/sweep-v2.txt"
el done
