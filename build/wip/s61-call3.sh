#!/bin/sh
# s61-call3.sh: mmv_f32_norm_1w reads the norm weights after its wait (pdl_defer's
# contract: only Weights before it; a model's norm weights are New rows). Every module's
# PTX (matmul.ptx returned for the commit), a rotated V2-Lite sweep against
# EMBER_CUDA_NO_NORM_ROUTER=1 on that PTX, the timeline with it, and the tests of
# s61-call2 on that PTX. Logs to $OUT as they go.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s61c3}"
(sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED") &
ptx_all /tmp/px
cp /tmp/px/matmul.ptx "$L/"
wait
X="EMBER_CUDA_PTX_DIR=/tmp/px"
sweep 5 v2 "$X EMBER_CUDA_NO_NORM_ROUTER=1 $E" "$X $E"
tl tl_v2_nr.log v2
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'NormRouter|Branch|KernelNames|EmbeddedKernelsWait|F32W' 200
tgroup 1 'Conformance' 200
model_tests 200
wait
cp /tmp/g0.log /tmp/g1.log "$L/"
el done
