#!/bin/sh
# mvp-gpu.sh: build/micro/mvp.cu on the GPU machine (nvcc only, no Go, no carry): one
# 8B Q4_K_M decode step's mat-vecs as the engine's chain of kernels against one
# persistent kernel (the two norms of a layer real in both, by one block in the persistent
# kernel), at two register caps, with and without a serial gap where attention and SwiGLU
# would run (GAP ns) and the L2 prefetch of the next group's first row blocks (PF). ~2
# minutes.
set -u
cd build/micro
for m in 2 3; do
	nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -DMVP_MINB=$m -o /tmp/mvp-$m mvp.cu &
done
wait
for m in 2 3; do
	for g in 0 1500; do
		for pf in 1 0; do
			echo "== MVP_MINB=$m GAP=$g PF=$pf"
			GAP=$g PF=$pf timeout 120 /tmp/mvp-$m
		done
	done
done
