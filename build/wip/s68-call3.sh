#!/bin/sh
# s68-call3.sh: the FFN half in one launch (kernels/cuda/ffn.cu, ffn.go) on the engine:
# every module's PTX made here (ffn.ptx is new; the others' should be the committed
# bytes), the FFN, fusion, kernel-name and PDL tests, conformance, the goldens and
# deepseek2's on it, then 8B Q4_K_M tg128 with EMBER_CUDA_NO_FFN=1 (the chain) against
# the default (ffn), rotated, and the README's bench on the new form. Before the call:
# TESTS="cuda archs deepseek2" sh build/dev-build.sh, hold kernels/cuda/*.ptx,
# testdata/vocab and testdata/tokenizers out; carry bin/dev.
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s68c3}"
ptx_all /tmp/px
cp /tmp/px/ffn.ptx "$L/"
same_bodies /tmp/px ffn
export EMBER_CUDA_PTX_DIR=/tmp/px
all_tests 'TestFFN|TestFused|TestEmbeddedKernelsWait|TestKernelNamesExist|TestMatVec' >"$L/tests.txt" 2>&1
cat "$L/tests.txt"
wait
el "model ready"
sweep 3 q4 "EMBER_CUDA_NO_FFN=1 $E" "$E" >"$L/sweep-q4.txt" 2>&1
cat "$L/sweep-q4.txt"
final q4
unset EMBER_CUDA_PTX_DIR
el done
