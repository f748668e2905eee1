#!/bin/sh
# Session 32, device call 3: mmg with f16 scales and one f16 fma a weight pair
# (MG_H2=1: three instructions a pair of weights against seven). build/micro/mmgb.cu as
# the tree has it and with -DMG_H2=1, then the engine at 64 streams on the MG_H2 PTX
# against the embedded, and TestMMG (the reference's bound) on it.
set -u
(cd build/micro && for v in 0 1; do
	nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -DMG_H2=$v -o /tmp/mmgb-$v mmgb.cu -lcublas &
done; wait; for v in 0 1; do echo "== MG_H2=$v"; timeout 120 /tmp/mmgb-$v; done)
MODULES=mmg VARIANTS="h2:-DMG_H2=1" BENCH=s64 ROUNDS=${ROUNDS:-3} TESTS='TestMMG|TestFusedMMGLayout' sh build/ptx-variants.sh
