#!/bin/sh
# s57-call3.sh (for session 57): settings chosen before sessions 45-56 changed V2-Lite's
# chain, in one rotated sweep on the committed build: the dense products evict-first
# from the first routed layer (default) against always (EMBER_CUDA_DENSE_EF=1); per-head
# products on mmv_idw (default) against mmv_id (EMBER_CUDA_NO_IDW=1); the Q8_0 mat-vecs'
# 66% carveout (default; V2-Lite's routed downs are Q8_0) against the driver's choice
# (EMBER_CUDA_CARVEOUT=off). V2-Lite tg128, six rounds. Local steps: bin/dev built;
# testdata/vocab, testdata/tokenizers and kernels/cuda/*.ptx held out; carry bin/dev.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s57c3}"
wait
sweep 6 v2 "$E" "EMBER_CUDA_DENSE_EF=1 $E" "EMBER_CUDA_NO_IDW=1 $E" "EMBER_CUDA_CARVEOUT=off $E"
el done
