#!/bin/sh
# s55-call1.sh (written in session 54, for the next session's first call): the tests that
# session 54's device time did not reach, on the committed PTX (embedded): TestNorm1Widths
# (add_rms_norm_q8_k_1's exact 2,048- and 4,096-wide forms and the widths beside them
# against the unfused kernels' bits) and TestFusedAddRMSNorm whole (it ran past 150-200 s
# limits in s54-call2.sh and s54-call3.sh), beside the queue tests.
# Local steps: bin/dev built (TESTS="cuda"), testdata/vocab, testdata/tokenizers and
# kernels/cuda/*.ptx held out of the carry; carry bin/dev.
set -u
export MODELS="none"
. build/gpu-setup.sh "${OUT:-/tmp/s55c1}"
tgroup 0 'TestNorm1Widths|TestFuseQueueNorm1|TestKernelNamesExist|TestEmbeddedKernelsWait' 120
tgroup 1 'TestFusedAddRMSNorm$' 400
wait
grep -E -- '--- (PASS|FAIL)' /tmp/g0.log /tmp/g1.log | head -20
el done
