#!/bin/sh
# s61-call2.sh: norm-router-side again, now taken (s61-call1 measured nothing: NormRouter
# declined every row because the loader's norm weights are not Weights). The embedded
# matmul.ptx is the H200's from s61-call1 (same matmul.cu). A rotated V2-Lite sweep
# against EMBER_CUDA_NO_NORM_ROUTER=1, both timelines, then TestNormRouterBits, the branch
# tests, deepseek2's CUDA tests (TestCUDANormRouter: the model's rows take it, same bits
# as declined), the goldens and conformance. Logs to $OUT as they go.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s61c2}"
(sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED") &
wait
sweep 5 v2 "EMBER_CUDA_NO_NORM_ROUTER=1 $E" "$E"
tl tl_v2_nr.log v2
tl tl_v2_nonr.log v2 EMBER_CUDA_NO_NORM_ROUTER=1
tgroup 0 'NormRouter|Branch|KernelNames|EmbeddedKernelsWait|F32W' 200
tgroup 1 'Conformance' 200
model_tests 200
wait
cp /tmp/g0.log /tmp/g1.log "$L/"
el done
