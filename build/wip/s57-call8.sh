#!/bin/sh
# s57-call8.sh (session 57): attention_short copying a row's older cache rows before its
# wait (pre: one row, one token's head rows, or Attention.OneNew), the newest row and the
# query after it, as attention_decD_1 does; s57-call7.sh's skip table had V2-Lite's
# attention_short576 at ~7.6 us of each layer's chain (8B's attention_dec128_1: ~0.4).
# Every module's PTX made here and returned; on it the attention tests, the latent
# ones, conformance, the goldens and deepseek2's CUDA tests; then V2-Lite tg128, HEAD's
# binary (bin/base) against the new one on the new PTX, six rotated rounds. Local steps:
# bin/base from HEAD, bin/dev (TESTS="cuda archs deepseek2") from the working tree;
# testdata/vocab, testdata/tokenizers and kernels/cuda/*.ptx held out; carry both.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s57c8}"
base_bin
ptx_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestAttentionLatent|TestShortAttention|TestLatentAttention|TestAttentionChoice' 250
tgroup 1 'Conformance' 250
tgroup 2 'TestFusedAttentionQ8K/short' 250
model_tests 250
wait
el "tests done"
unset EMBER_CUDA_PTX_DIR
N="EMBER_CUDA_PTX_DIR=/tmp/px $E"
grep -E -- '--- (PASS|FAIL)' /tmp/g0.log /tmp/g2.log | head -30
sweep 6 v2 "$B" "$N"
el done
