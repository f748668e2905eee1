#!/bin/sh
# mvr-gpu.sh: build/micro/mvp.cu with mvr.cuh's ring kernel on the GPU machine (nvcc
# only, no carry): one 8B Q4_K_M decode step's mat-vecs and norms as the engine's chain,
# mvp's persistent kernel and the ring, at serial gaps of GAPS ns (where attention and
# SwiGLU would run), ring shapes RINGS (S stages x SB bytes) and MODES (FULL:NOCOMP: whole
# rows a stage in one copy; consumers that only touch the stage). ~1-2 minutes. REPACK=1
# (session 40) takes the K-chunked stages (FULL 0) from repacked copies, one bulk copy a
# stage; NONORM=1 spins GAP where the norms run. Session 41 ran (NOTES.md, session 41)
#   GAPS="0 2500" RINGS="6x26880 12x13440" MODES="0:0 0:1 1:0" REPACK=1 sh build/mvr-gpu.sh
#   GAPS="2500" RINGS="6x26880 12x13440" MODES="0:0 0:1" REPACK=1 NONORM=1 sh build/mvr-gpu.sh
# beside sh build/ring-gpu.sh (ring.cu: the ring alone); MODES' NOCOMP 2 also leaves the
# activation rows out.
set -u
cd build/micro
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/mvp mvp.cu 2>&1 | grep -i error
for g in ${GAPS:-0 1500 4000}; do
	for r in ${RINGS:-3x53760 4x40320 6x26880}; do
		for m in ${MODES:-0:0}; do
			echo "== GAP=$g ring $r mode $m"
			GAP=$g S=${r%x*} SB=${r#*x} FULL=${m%:*} NOCOMP=${m#*:} timeout 60 /tmp/mvp | tail -2
		done
	done
done
