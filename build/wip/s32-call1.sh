#!/bin/sh
# Session 32, device call 1: build/wip/sw-gpu.sh (SwiGLU inside mmg's pair, A/B), then
# mmg_q4_k's stall reasons and SASS at 64 streams (the fusion off, so the plain kernel
# runs): NOTES "Next steps (session 31)" items 1 and 2.
set -u
# (build/wip/sw-gpu.sh and mmg-swiglu.patch as of 53f1bfe: git show 53f1bfe:build/wip/sw-gpu.sh)
ROUNDS=${ROUNDS:-2} sh build/wip/sw-gpu.sh
export EMBER_CUDA_PTX_DIR=/tmp/pv-sw EMBER_CUDA_NO_SWIGLU_FUSE=1
AT=50 DETAIL="mmg_q4_k" SASS=1 PACK=1 timeout -s KILL 330 sh build/profile-cuda.sh bin/dev/ember /tmp/q4.gguf $OUT/prof -streams 64 -p 512 -n 128 2>&1 | tail -45
