#!/bin/sh
# s54-call3.sh (session 54): s54-call2.sh again for norm1_row<NB, EXACT>: rows of exactly
# 2,048 or 4,096 columns unrolled without guards, others as before (32 guarded steps).
# Every module's PTX made here (quant.ptx returned in $OUT); the norm's tests,
# conformance, goldens and deepseek2's CUDA tests on it; then tg128 A/B on one binary
# (A: the committed PTX, embedded; B: EMBER_CUDA_PTX_DIR) for the 8B and V2-Lite Q4_K_M.
# Local steps: bin/dev built (TESTS="cuda archs deepseek2"), testdata/vocab,
# testdata/tokenizers and kernels/cuda/*.ptx held out of the carry.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s54c3}"
t() { [ $(($(date +%s) - T0)) -lt 440 ]; }
sh build/ptx-copy.sh /tmp/pb || el "PTX FAILED" # every module: the carry holds no committed PTX
cp /tmp/pb/quant.ptx "$L/"
export EMBER_CUDA_PTX_DIR=/tmp/pb
tgroup 0 'TestFusedAddRMSNorm|TestFuseQueueNorm1|TestKernelNamesExist|TestEmbeddedKernelsWait' 200
tgroup 1 'TestConformance$' 150
model_tests 150
wait
grep -E -- '--- FAIL' /tmp/g0.log | head -10
el "tests done"
unset EMBER_CUDA_PTX_DIR
N="EMBER_CUDA_PTX_DIR=/tmp/pb $E"
t && ab 5 q4 "$E" "$N"
t && ab 5 v2 "$E" "$N"
t && ab 5 q4 "$N" "$E"
t && ab 5 v2 "$N" "$E"
el done
