#!/bin/sh
# s67-call5.sh (session 67): the latent attention on 1,024 threads (s67-vX's
# attention_short576x: 128 positions a scoring round, 14 position lanes in P V; the host
# takes it with EMBER_CUDA_SHORT_X=1) against attention_short576w: its registers (ptxas),
# rotated V2-Lite tg128 rounds, then its bits tests. Run in session 67 (build/wip/s67-call5:
# 665.2 against 736.7, 0 of 4; not kept), after which the host switch was taken out again
# (git show 5efd64f -- inference/backend/cuda/attention_short.go to restore it). Before the call: TESTS=cuda sh
# build/dev-build.sh, hold kernels/cuda/*.ptx, testdata/vocab and testdata/tokenizers
# out; carry bin/dev.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s67c5}"
ptx_all /tmp/px
patched X build/wip/s67-vX.patch
ptxas -arch=sm_90a -v /tmp/vX/attention_short.ptx -o /tmp/vX.cubin 2>&1 | grep -A1 'attention_short576[wx]' | grep -E 'Compiling|registers|spill' | head -8
wait
el "models ready"
sweep 4 v2 "EMBER_CUDA_PTX_DIR=/tmp/px $E" "EMBER_CUDA_PTX_DIR=/tmp/vX EMBER_CUDA_SHORT_X=1 $E" >"$L/sweep.txt" 2>&1
cat "$L/sweep.txt"
export EMBER_CUDA_SHORT_X=1 BITS_TESTS="TestAttentionLatentBits|TestShortAttention"
bits_tests 2 /tmp/vX 150 >"$L/tests.txt" 2>&1
wait
cat "$L/tests.txt"
el done
