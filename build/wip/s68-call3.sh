#!/bin/sh
# s68-call3.sh: the FFN half in one launch (kernels/cuda/ffn.cu, ffn.go) on the engine:
# every module's PTX made here (ffn.ptx is new; the others' should be the committed
# bytes), TestFFN first, then 8B Q4_K_M tg128 with EMBER_CUDA_NO_FFN=1 (the chain)
# against the default (ffn), rotated, the README's bench on the new form, then the
# fusion, kernel-name and PDL tests, conformance, the goldens and deepseek2's. Before
# the call: TESTS="cuda archs deepseek2" sh build/dev-build.sh, hold kernels/cuda/*.ptx,
# testdata/vocab and testdata/tokenizers out; carry bin/dev. (Its first run was lost:
# the machine was taken back.)
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s68c3}"
ptx_all /tmp/px
cp /tmp/px/ffn.ptx "$L/"
same_bodies /tmp/px ffn
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestFFN' 150
wait
el "model ready"
sweep 3 q4 "EMBER_CUDA_NO_FFN=1 $E" "$E" 2>&1 | tee "$L/sweep-q4.txt"
final q4
all_tests 'TestFused|TestEmbeddedKernelsWait|TestKernelNamesExist' >"$L/tests.txt" 2>&1
cat "$L/tests.txt"
unset EMBER_CUDA_PTX_DIR
el done
