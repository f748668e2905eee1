#!/bin/sh
# gen-ptx.sh: compile kernels/cuda/*.cu to the committed PTX (needs nvcc, CUDA 12+).
# Each .ptx starts with the sha256 of its .cu and every header, *.cuh in name order
# (kernels/cuda checks it).
# -fmad=false: the kernels round like the Go reference, with no fused multiply-adds.
set -eu
cd "$(dirname "$0")/../kernels/cuda"
for cu in *.cu; do
	m=${cu%.cu}
	arch=sm_90
	[ "$m" = mmg ] && arch=sm_90a # wgmma: Hopper only (inference/backend/cuda/mmg.go)
	nvcc -arch=$arch -ptx -O3 -fmad=false -o "/tmp/$m.ptx" "$cu"
	h=$(cat "$cu" $(LC_ALL=C ls *.cuh) | sha256sum | cut -d" " -f1)
	{ echo "// ember-sources-sha256: $h"; cat "/tmp/$m.ptx"; } >"$m.ptx"
	echo "$m.ptx: $(wc -c <"$m.ptx") bytes"
done
