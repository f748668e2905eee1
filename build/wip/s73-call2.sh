#!/bin/sh
# s73-call2.sh (session 73): attention_vb576 (DeepSeek's latent attention of one token,
# its attn_v_b products and their Q8_K rounding in one launch; latentvb.go), on by
# default. Every module's PTX made here (only attention_short.cu changed), returned as
# ptx.tar.xz; on it: TestAttentionVBBits (bit for bit against EMBER_CUDA_VB=off), the
# latent, short and absorb tests, the CUDA goldens, deepseek2's CUDA tests; then V2-Lite
# tg128 default against EMBER_CUDA_VB=off (5 rotated rounds), and a timeline of each.
# Before: sh build/dev-build.sh; hold PTX, vocab, tokenizers out; carry bin/dev.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s73c2}"
ptx_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestAttentionVB|TestAttentionLatent|TestShortAttention|TestLatentAttention|TestKernelNamesExist|TestEmbeddedKernelsWait|TestBranchedGraph|TestAbsorb|TestGroupsSpacedBits' 300
model_tests 300
wait
grep -E -- '^(--- |ok|FAIL|PASS)' /tmp/g0.log | tail -30
cp /tmp/g0.log "$L/g0.log"
el "tests done"
sweep 5 v2 "$E" "EMBER_CUDA_VB=off $E" 2>&1 | tee "$L/sweep-v2.txt"
el "v2 64 streams vb on/off: $(s $E bench -backend cuda -streams 64 -p 512 -n 128 -m /tmp/v2.gguf) / $(s env EMBER_CUDA_VB=off $E bench -backend cuda -streams 64 -p 512 -n 128 -m /tmp/v2.gguf)"
unset EMBER_CUDA_PTX_DIR
(sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED")
tl tl_v2_vb.log v2
tl tl_v2_novb.log v2 EMBER_CUDA_VB=off
el done
