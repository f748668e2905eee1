#!/bin/sh
# s72-call2.sh (session 72): absorb on by default, on the committed (embedded) PTX: the
# CUDA goldens, deepseek2's CUDA tests, the backend's latent/absorb/graph tests, then
# V2-Lite tg128 default against EMBER_CUDA_ABSORB=off (5 rotated rounds) and the 8B
# (absorb never fires there) twice. Before: sh build/dev-build.sh; hold PTX, vocab,
# tokenizers out; carry bin/dev.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s72c2}"
tgroup 0 'TestAbsorb|TestKernelNamesExist|TestEmbeddedKernelsWait|TestBranchedGraph|TestGroupsSpacedBits|TestAttentionLatent|TestNormRouter' 240
model_tests 240
wait
cp /tmp/g0.log "$L/g0.log"
el "tests done"
sweep 5 v2 "$E" "EMBER_CUDA_ABSORB=off $E" 2>&1 | tee "$L/sweep-v2.txt"
sweep 2 q4 "$E" "EMBER_CUDA_ABSORB=off $E" 2>&1 | tee "$L/sweep-q4.txt"
el done
