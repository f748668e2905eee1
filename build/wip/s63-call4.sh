#!/bin/sh
# s63-call4.sh (session 63): attention_short576tc, the latent attention's scores and
# p * V on the tensor cores (EMBER_CUDA_SHORT_TC=1). attention_short's PTX made from the
# tree (the other modules' bodies unchanged); on it, with the switch on, the short and
# latent attention tests, the goldens and deepseek2's CUDA tests; then rotated V2-Lite
# rounds, off against on.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s63c4}"
ptx_all /tmp/px
same_bodies /tmp/px attention_short
wait
el "models and PTX ready"
export EMBER_CUDA_PTX_DIR=/tmp/px
export EMBER_CUDA_SHORT_TC=1
tgroup 0 'TestShortAttention|TestAttentionLatentBits' 200
model_tests 200
wait
unset EMBER_CUDA_SHORT_TC
grep -E -- '--- FAIL|tc|TC' /tmp/g0.log | head -20
cp /tmp/g0.log "$L/"
el "tests done"
sweep 6 v2 "$E" "EMBER_CUDA_SHORT_TC=1 $E"
el done
