#!/bin/sh
# mvn-gpu.sh: build/micro/mvp.cu's chain with the norm placements of mvn.cuh (NORM 0-4),
# two rounds, at serial gaps GAPS (ns). nvcc only, no carry; ~1 minute.
set -u
cd build/micro
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/mvp mvp.cu 2>&1 | grep -i error
for r in 1 2; do
	for g in ${GAPS:-0 1500}; do
		for n in 0 1 2 3 4; do
			GAP=$g NORM=$n timeout 60 /tmp/mvp | grep -E "^ring against|^NORM" | tr '\n' ' ' | sed 's/, persistent [0-9.]* ([0-9.]*)//; s/, ring [0-9.]* ([^)]*)//'
			echo
		done
	done
done
