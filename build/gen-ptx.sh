#!/bin/sh
# gen-ptx.sh: compile kernels/cuda/*.cu to the committed PTX (needs nvcc, CUDA 12+).
# Each .ptx starts with the sha256 of its .cu and every header, *.cuh in name order
# (kernels/cuda checks it).
# -fmad=false: the kernels round like the Go reference, with no fused multiply-adds.
set -eu
cd "$(dirname "$0")/../kernels/cuda"
for cu in *.cu; do
	m=${cu%.cu}
	sh ../../build/ptx-one.sh . "$m"
	echo "$m.ptx: $(wc -c <"$m.ptx") bytes"
done
# The Hopper set's machine code from that PTX (kernels/cuda/sm90, TestCubinsMatchPTX).
sh ../../build/gen-cubin.sh sm90
