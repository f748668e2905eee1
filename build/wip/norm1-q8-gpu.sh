#!/bin/sh
# norm1-q8-gpu.sh: the device call for build/wip/norm1-q8.patch (its header says how to
# build). quant.ptx made here twice into $OUT (tree: the patch as it is; unroll:
# -DNORM1_UNROLL, add_rms_norm_q8_k_1's rounds unrolled too); the fused-norm tests on the
# first; then, three rounds alternating: 8B Q8_0 tg128 on add_rms_norm_q8_1 against
# EMBER_CUDA_NO_NORM1=1 (add_rms_norm_q8), and 8B Q4_K_M tg128 on each PTX against
# EMBER_CUDA_NO_NORM1=1. ~6 minutes.
set -u
export MODELS="q8 q4"
. build/gpu-setup.sh "${OUT:-/tmp/n1q8}"
for v in tree: unroll:-DNORM1_UNROLL; do
	n=${v%%:*} f=${v#*:}
	d=/tmp/pv-$n
	rm -rf "$d" && mkdir -p "$d" && cp kernels/cuda/*.cu kernels/cuda/*.cuh kernels/cuda/*.ptx "$d/"
	sh build/ptx-one.sh "$d" quant $f && cp "$d/quant.ptx" "$L/$n-quant.ptx"
done
export EMBER_CUDA_PTX_DIR=/tmp/pv-tree
(cd inference/backend/cuda && timeout -s KILL 240 "$R/bin/dev/cuda.test" -test.run 'TestFusedAddRMSNorm|TestFuseQueue' 2>&1 | tail -3)
wait
B="bench -backend cuda -p 0 -n 128 -r 3"
for r in 1 2 3; do
	echo "round $r 8B Q8_0: norm1 $(q "$E" $B -m /tmp/q8.gguf) | 1024 threads $(EMBER_CUDA_NO_NORM1=1 q "$E" $B -m /tmp/q8.gguf)"
	echo "round $r 8B Q4_K_M: norm1 $(q "$E" $B -m /tmp/q4.gguf) | unrolled $(EMBER_CUDA_PTX_DIR=/tmp/pv-unroll q "$E" $B -m /tmp/q4.gguf) | 1024 threads $(EMBER_CUDA_NO_NORM1=1 q "$E" $B -m /tmp/q4.gguf)"
done
