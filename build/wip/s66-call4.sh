#!/bin/sh
# s66-call4.sh: the landed kernel (s66-vL, its PTX from s66-call3) embedded: the tests
# and the README's figures. Carry: bin/dev built on it; kernels/cuda/*.ptx, testdata/vocab
# and testdata/tokenizers held out.
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s66c4}"
wait
el "models ready"
all_tests 'TestAttentionLatentBits|TestFusedAttentionQ8K|TestShortAttention|TestKernelNamesExist|TestEmbeddedKernelsWait|TestLatentAttention' >"$L/tests.txt" 2>&1
final v2 q4 >"$L/final.txt" 2>&1
cat "$L/tests.txt" "$L/final.txt"
