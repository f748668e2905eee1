#!/bin/sh
# s54-call2.sh (session 54): add_rms_norm_q8_k_1 with its loops unrolled for the row's
# width (norm1_row<8|16|32>: rows of up to 2,048, 4,096 or 8,192 columns) instead of
# always 32 steps guarded off past the row: half the code on the 8B's 4,096-wide rows,
# a quarter on V2-Lite's 2,048. quant.ptx made here (returned in $OUT); the norm's tests,
# conformance, goldens and deepseek2's CUDA tests on it; then tg128 A/B on one binary
# (A: the committed PTX, embedded; B: EMBER_CUDA_PTX_DIR) for the 8B and V2-Lite Q4_K_M.
# Local steps: bin/dev built (TESTS="cuda archs deepseek2"), testdata/vocab,
# testdata/tokenizers and kernels/cuda/*.ptx held out of the carry.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s54c2}"
t() { [ $(($(date +%s) - T0)) -lt 470 ]; }
sh build/ptx-copy.sh /tmp/pb || el "PTX FAILED" # every module: the carry holds no committed PTX
cp /tmp/pb/quant.ptx "$L/"
export EMBER_CUDA_PTX_DIR=/tmp/pb
tgroup 0 'TestFusedAddRMSNorm|TestFuseQueueNorm1|TestKernelNamesExist|TestEmbeddedKernelsWait' 150
tgroup 1 'TestConformance$' 150
model_tests 150
wait
grep -E -- '--- FAIL' /tmp/g0.log | head -10
el "tests done"
unset EMBER_CUDA_PTX_DIR
N="EMBER_CUDA_PTX_DIR=/tmp/pb $E"
t && ab 6 q4 "$E" "$N"
t && ab 6 v2 "$E" "$N"
t && ab 4 q4 "$N" "$E"
t && ab 4 v2 "$N" "$E"
el done
