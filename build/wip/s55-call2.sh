#!/bin/sh
# s55-call2.sh (written in session 54, not yet run): build/wip/sumadd-k.patch, moe_sum_add
# for k = 6 and 8 slots where one pass of the grid covers the outputs (a decode step's
# sum of the routed experts plus the shared experts' output): 32-bit indices, every load
# issued before the first product, ~45 instructions from the wait to the first load
# against ~135 (the general form's 64-bit divisions; ptxas 12.4 on nvcc 12.4's PTX).
# TestMoERouting now adds the shared experts' output after the routed sum (moe_sum_add
# fused against add_f32 unfused, bits equal), on the committed PTX (embedded: the test
# itself) and the new; deepseek2's CUDA tests and the goldens on the new; V2-Lite tg128
# A/B on one binary, five rounds, then five with each round's order swapped.
# Local steps: git apply build/wip/sumadd-k.patch; bin/dev built (TESTS="cuda archs
# deepseek2"); testdata/vocab, testdata/tokenizers and kernels/cuda/*.ptx held out of the
# carry; carry bin/dev. If it wins: commit the patch with the returned moe.ptx.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s55c2}"
t() { [ $(($(date +%s) - T0)) -lt 440 ]; }
ptx_all /tmp/pb
tgroup 0 'TestMoERouting$' 150
wait
el "committed PTX: $(grep -E -c -- '^--- PASS' /tmp/g0.log) pass"
export EMBER_CUDA_PTX_DIR=/tmp/pb
tgroup 1 'TestMoERouting$|TestMMVQueuePairedRuns|TestKernelNamesExist|TestEmbeddedKernelsWait' 150
model_tests 150
wait
el "tests done"
unset EMBER_CUDA_PTX_DIR
N="EMBER_CUDA_PTX_DIR=/tmp/pb $E"
t && ab 5 v2 "$E" "$N"
t && ab 5 v2 "$N" "$E"
el done
