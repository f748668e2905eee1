#!/bin/sh
# s56-call1.sh (session 56): add_rms_norm_q8_k_r (quant.cu; fuseRouter in
# norm_router.go): a MoE layer's FFN norm and its router product in one launch. Every
# module's PTX made here (returned as $OUT/ptx.tar.xz; only quant.ptx's body should
# differ from the committed), and on it TestNormRouter (new), TestMoERouting,
# TestBranchedGraph, the F32-weight and kernel-name tests, the goldens and deepseek2's
# CUDA tests; then V2-Lite tg128 on one binary and that PTX, A EMBER_CUDA_NORM_ROUTER=0
# (two launches) / B fused, five rounds, then five with each round's order swapped.
# Local steps: bin/dev built (TESTS="cuda archs deepseek2"); testdata/vocab,
# testdata/tokenizers and kernels/cuda/*.ptx held out of the carry; carry bin/dev.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s56c1}"
ptx_all /tmp/pb
export EMBER_CUDA_PTX_DIR=/tmp/pb
tgroup 0 'TestNormRouter|TestMoERouting$|TestBranchedGraph|TestF32Weight|TestKernelNamesExist|TestEmbeddedKernelsWait' 200
model_tests 220
wait
grep -E -- '--- (PASS|FAIL)' /tmp/g0.log | head -30
el "tests done"
t() { [ $(($(date +%s) - T0)) -lt 470 ]; }
A="EMBER_CUDA_NORM_ROUTER=0 $E"
t && ab 5 v2 "$A" "$E"
t && ab 5 v2 "$E" "$A"
el done
