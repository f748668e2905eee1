#!/bin/sh
# ring-gpu.sh: build/micro/ring.cu on the GPU machine (nvcc only, no carry; ~1 minute):
# one 8B Q4_K_M step's weight bytes streamed by one persistent kernel through a ring of
# bulk copies, with and without grid barriers between the products, against one plain
# streaming kernel over the same bytes.
set -u
cd build/micro
nvcc -gencode arch=compute_90a,code=sm_90a -O3 -o /tmp/ring ring.cu 2>&1 | grep -i error
timeout -s KILL 150 /tmp/ring
