#!/bin/sh
# s58-callE.sh (session 58): attention_short576c, DeepSeek's latent attention over at
# most 256 positions on a cluster of eight blocks a head row (32 positions each) in
# place of attention_short576's one block (s57's skip table: ~7.6 us of each V2-Lite
# layer's chain). Every module's PTX made here (attention_short.cu changed) and
# returned; on it TestShortClusterAttention (against the one-block kernel), the latent
# and short attention suites, TestAttentionLatentBits (the fused Q8_K rounding),
# deepseek2's CUDA tests and the CUDA goldens; then V2-Lite tg128, four rotated rounds,
# the cluster against EMBER_CUDA_NO_SHORT_CLUSTER=1 on the same binary.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s58cE}"
ptx_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestShortCluster|TestAttentionLatentBits|TestLatentAttention|TestShortAttention|TestAttentionLatentChoice' 200
model_tests 200
wait
grep -E -- '--- (PASS|FAIL)|largest relative' /tmp/g0.log | head -40
el "tests done"
unset EMBER_CUDA_PTX_DIR
N="EMBER_CUDA_PTX_DIR=/tmp/px $E"
sweep 4 v2 "$N" "EMBER_CUDA_NO_SHORT_CLUSTER=1 $N"
el done
