#!/bin/sh
# att1-gpu.sh: build/micro/att1.cu on the GPU machine (nvcc only, no carry): a batch-1
# step's attention chain (RoPE stand-in, attention, output projection; 32 layers of the
# 8B's shapes, PDL graph) on attention_dec128 against att1 (one row, 4 warps, keys and
# values of older positions copied before the wait, four barriers after it), and with no
# attention, at positions N. Checks att1's outputs against attention_dec128's. ~1 minute.
set -u
cd build/micro
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/att1 att1.cu 2>&1 | grep -i error
for r in 1 2; do
	for n in ${NS:-1 33 128 256}; do
		N=$n timeout 60 /tmp/att1
	done
done
