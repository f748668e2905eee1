#!/bin/sh
# ptx-one.sh DIR MODULE [nvcc flags...]: DIR/MODULE.cu compiled to DIR/MODULE.ptx as the
# committed PTX is made (needs nvcc, CUDA 12+): -O3 -fmad=false (the kernels round like
# the Go reference, with no fused multiply-adds), sm_90, or sm_90a for mmg (wgmma:
# Hopper only, inference/backend/cuda/mmg.go); its first line the sha256 of MODULE.cu and
# every DIR/*.cuh in name order, which kernels/cuda checks. gen-ptx.sh runs it over
# kernels/cuda; the GPU scripts over copies of it. SM=80 makes the compatibility PTX of
# compute capability 8.x instead (DIR/MODULE.ptx all the same; gen-ptx-compat.sh).
set -eu
d=$1 m=$2
shift 2
cd "$d"
arch=sm_${SM:-90}
[ "$m" = mmg ] && [ "$arch" = sm_90 ] && arch=sm_90a
nvcc -arch=$arch -ptx -O3 -fmad=false "$@" -o "$m.raw" "$m.cu"
h=$(cat "$m.cu" $(LC_ALL=C ls *.cuh) | sha256sum | cut -d" " -f1)
{ echo "// ember-sources-sha256: $h"; cat "$m.raw"; } >"$m.ptx"
rm -f "$m.raw"
