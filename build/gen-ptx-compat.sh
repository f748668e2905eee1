#!/bin/sh
# gen-ptx-compat.sh [DIR]: the compatibility PTX (compute capability 8.x: A100, RTX 30
# and 40 series) of every module of kernels/cuda but those sm80/hopper-only.txt names,
# compiled with ptx-one.sh's flags for sm_80 (EM_SM90 is 0 there: no programmatic
# dependent launch, no cluster kernels) and stored gzip-compressed as
# DIR/MODULE.ptx.gz (default kernels/cuda/sm80), which kernels/cuda embeds and checks,
# and (default directory only) their cubins (gen-cubin.sh sm80).
# Needs nvcc (CUDA 12+).
set -eu
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-kernels/cuda/sm80}")
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp kernels/cuda/*.cu kernels/cuda/*.cuh "$tmp/"
skip=$(grep -v '^#' kernels/cuda/sm80/hopper-only.txt)
for cu in kernels/cuda/*.cu; do
	m=$(basename "$cu" .cu)
	if printf '%s\n' $skip | grep -qx "$m"; then
		continue
	fi
	SM=80 sh build/ptx-one.sh "$tmp" "$m"
	gzip -n -9 -c "$tmp/$m.ptx" >"$out/$m.ptx.gz"
	echo "$m.ptx.gz: $(wc -c <"$out/$m.ptx.gz") bytes"
done
# Its machine code for 8.x (kernels/cuda/sm80/*.cubin.gz, TestCubinsMatchPTX), into the
# default directory only.
[ -z "${1:-}" ] && sh build/gen-cubin.sh sm80
