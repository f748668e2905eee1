#!/bin/sh
# s67-call3.sh (session 67): every module's PTX from the tree (attention_short.cu tidied:
# a static_assert and if constexpr, expected to leave its body as s67-call2's; attention.cu
# and attention_split.cu with their products as fused multiply-adds, as attention_short's
# since s67-call2: the same bits), compared with the committed bodies kept in the tree;
# the tests on that PTX (the attention suites, conformance, the goldens, deepseek2's CUDA
# tests); the README's figures on it. Before the call: TESTS="cuda archs deepseek2" sh
# build/dev-build.sh; hold out kernels/cuda/*.ptx but attention_short.ptx, attention.ptx
# and attention_split.ptx, and testdata/vocab and testdata/tokenizers; carry bin/dev.
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s67c3}"
ptx_all /tmp/px
same_bodies /tmp/px
for m in attention_short attention attention_split; do cp /tmp/px/$m.ptx "$L/"; done
wait
el "models ready"
export EMBER_CUDA_PTX_DIR=/tmp/px
all_tests 'TestAttentionLatentBits|TestFusedAttentionQ8K|TestShortAttention|TestKernelNamesExist|TestEmbeddedKernelsWait|TestLatentAttention|TestSplitAttention|TestDecodeAttention|TestPagedAttention|TestBatchedDecodeAttention|TestPrefillAttention' >"$L/tests.txt" 2>&1
cat "$L/tests.txt"
final v2 q4 >"$L/final.txt" 2>&1
cat "$L/final.txt"
unset EMBER_CUDA_PTX_DIR
el done
