#!/bin/sh
# s74-call1.sh (for session 74's first call): the tests mended after s73-call3
# (TestAttentionLatentBits: two launches fewer for one token; TestAttentionVBBits: each
# run sets EMBER_CUDA_VB itself) on the committed PTX, with the other latent and short
# tests, the CUDA goldens and deepseek2's CUDA tests; then V2-Lite tg128 against
# EMBER_CUDA_VB=off (5 rotated rounds) and the 8B once. Before: sh build/dev-build.sh;
# hold PTX, vocab, tokenizers out; carry bin/dev.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s74c1}"
tgroup 0 'TestAttentionVB|TestAttentionLatent|TestShortAttention|TestLatentAttention|TestKernelNamesExist|TestEmbeddedKernelsWait|TestBranchedGraph|TestVBQueue|TestAbsorbQueue' 240
model_tests 240
wait
grep -E -- '^(--- |ok|FAIL|PASS)|latentvb|latent_gpu' /tmp/g0.log | tail -30
cp /tmp/g0.log "$L/g0.log"
el "tests done"
sweep 5 v2 "$E" "EMBER_CUDA_VB=off $E" 2>&1 | tee "$L/sweep-v2.txt"
el "q4 tg128: $(tg1 q4 "$E")"
el done
