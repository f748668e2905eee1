#!/bin/sh
# shortattn-gpu.sh [PATCH ...]: build/micro/shortattn.cu on the GPU machine (nvcc only,
# no carry; ~1-2 minutes): the latent attention alone, after a streaming kernel and after
# an empty one, by position (NOTES session 65, next step 2). With patches (paths from the
# repository root, against kernels/cuda/attention_short.cu), each builds and runs again
# on a patched copy of kernels/cuda.
set -u
R=$PWD
run() { # run DIR LABEL
	echo "== $2"
	(cd build/micro && nvcc -gencode arch=compute_90a,code=sm_90a -O3 -fmad=false -I "$1" -o /tmp/shortattn shortattn.cu 2>&1 |
		grep -i error) && return
	timeout -s KILL 240 /tmp/shortattn
}
run "$R/kernels/cuda" "the tree's kernel"
for p in "$@"; do
	d=/tmp/sa-$(basename "$p" .patch)
	rm -rf "$d" && cp -r kernels/cuda "$d" && (cd "$d" && patch -s -p3 <"$R/$p") && run "$d" "$p"
done
