#!/bin/sh
# s48-call1.sh: build/micro/mvp.cu's NORM=7 (mvc.cuh: the norm inside the next product's
# thread block clusters) against NORM=5 (the engine's add_rms_norm_q8_k_1) and no norm,
# at gaps 0 and 1500 ns. nvcc only; ~3 minutes.
set -u
cd build/micro
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/mvp mvp.cu 2>&1 | grep -i error
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
for g in 0 1500; do
	echo "== NORM=7 GAP=$g"
	NORM=7 GAP=$g timeout 200 /tmp/mvp
done
