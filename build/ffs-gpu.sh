#!/bin/sh
# ffs-gpu.sh: build/micro/ffs.cu on the GPU machine (nvcc only, no carry; ~1 minute): a
# layer's gate/up, SwiGLU and down as the engine's three launches against one launch
# split along the hidden width (clusters of CS blocks a group of 256 hidden values, GPC
# groups a cluster, W warps a block), outputs checked against the chain, 32 layers'
# FFN halves timed with GAPS ns between them (where a layer's attention half runs), the
# partial sums added by the last block of each rank (RED 0) or by float atomics (RED 1,
# timing only; RED 2 the sum's loads split over the threads), down's first step
# loaded before the cluster's barriers (DFIRSTS 1) or after (0). VAR picks variants by name ("cs4 gpc1 w8" ...).
set -u
cd build/micro
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/ffs ffs.cu 2>&1 | grep -i error
for g in ${GAPS:-0 8000}; do
	for r in ${REDS:-2 1 0}; do
		for d in ${DFIRSTS:-1}; do
			GAP=$g RED=$r DFIRST=$d timeout -s KILL 120 /tmp/ffs
		done
	done
done
