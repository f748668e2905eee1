#!/bin/sh
# ffs-gpu.sh: build/micro/ffs.cu on the GPU machine (nvcc only, no carry; ~1 minute): a
# layer's gate/up, SwiGLU and down as the engine's three launches against the engine's
# one (kernels/cuda/ffn.cu), its cluster from __cluster_dims__ (CDIMS 1, as the engine
# launches it) or from the launch attribute (0), outputs checked against the chain, 32
# layers' FFN halves timed with GAPS ns between them (where a layer's attention half
# runs). Session 68's first version of the micro (variants of the form) is commit
# 9db16de's.
set -u
cd build/micro
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/ffs ffs.cu 2>&1 | grep -i error
for g in ${GAPS:-0 8000}; do
	for c in ${CDIMS:-0 1}; do
		GAP=$g CDIMS=$c timeout -s KILL 120 /tmp/ffs
	done
done
