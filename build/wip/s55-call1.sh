#!/bin/sh
# s55-call1.sh (session 55; replaces session 54's draft, which ran only the norm tests):
# every test this call needs, at once (no timing here): on the committed PTX (embedded)
# TestNorm1Widths (add_rms_norm_q8_k_1's exact 2,048- and 4,096-wide forms and the widths
# beside them, against the unfused kernels' bits), TestFusedAddRMSNorm whole (it ran past
# 150-200 s limits in s54-call2/3) and TestMoERouting (which now adds the shared
# experts' output); then every module's PTX made here with build/wip/sumadd-k.patch
# applied (moe_sum_add's 6- and 8-slot forms), returned as $OUT/ptx.tar.xz, and on it
# TestMoERouting, the queue tests, the goldens and deepseek2's CUDA tests. s55-call2.sh
# times it.
# Local steps: git apply build/wip/sumadd-k.patch; bin/dev built (TESTS="cuda archs
# deepseek2"); testdata/vocab, testdata/tokenizers and kernels/cuda/*.ptx held out of the
# carry (ptx_all makes every module); carry bin/dev.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s55c1}"
tgroup 0 'TestNorm1Widths|TestFuseQueueNorm1|TestKernelNamesExist|TestEmbeddedKernelsWait' 200
tgroup 1 'TestFusedAddRMSNorm$' 450
tgroup 2 'TestMoERouting$' 200
ptx_all /tmp/pb
export EMBER_CUDA_PTX_DIR=/tmp/pb
tgroup 3 'TestMoERouting$|TestMMVQueuePairedRuns|TestKernelNamesExist|TestEmbeddedKernelsWait' 200
model_tests 250
wait
grep -E -- '--- (PASS|FAIL)' /tmp/g0.log | head -20
el done
