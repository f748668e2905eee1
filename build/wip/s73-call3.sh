#!/bin/sh
# s73-call3.sh (session 73): attention_vb576's second form (the Q8_K row kept in shared
# memory; the odd head's block stores its outputs into the even one's and leaves, one
# cluster barrier) and the host's shared-memory fix (no extra bytes: the matrix is in
# registers). Every module's PTX made here, returned as ptx.tar.xz; on it:
# TestAttentionVBBits, the latent and short tests, the CUDA goldens, deepseek2's CUDA
# tests; V2-Lite tg128 default against EMBER_CUDA_VB=off (5 rotated rounds); a timeline.
# Before: sh build/dev-build.sh; hold PTX, vocab, tokenizers out; carry bin/dev.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s73c3}"
ptx_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestAttentionVB|TestAttentionLatent|TestShortAttention|TestLatentAttention|TestKernelNamesExist|TestEmbeddedKernelsWait|TestBranchedGraph|TestVBQueue' 240
model_tests 240
wait
grep -E -- '^(--- |ok|FAIL|PASS)|latentvb' /tmp/g0.log | tail -30
cp /tmp/g0.log "$L/g0.log"
el "tests done"
sweep 5 v2 "$E" "EMBER_CUDA_VB=off $E" 2>&1 | tee "$L/sweep-v2.txt"
unset EMBER_CUDA_PTX_DIR
(sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED")
tl tl_v2_vb.log v2
el done
