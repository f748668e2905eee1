#!/bin/sh
# kvcopy-gpu.sh: build/micro/kvcopy.cu on the GPU machine (nvcc only, no carry; ~1
# minute): one block's copy of a latent KV tile into shared memory by cp.async, bulk
# copies a row or a page, or plain loads, from L2 or HBM, 16 or 132 blocks.
set -u
cd build/micro
nvcc -gencode arch=compute_90a,code=sm_90a -O3 -o /tmp/kvcopy kvcopy.cu 2>&1 | grep -i error
timeout -s KILL 200 /tmp/kvcopy
