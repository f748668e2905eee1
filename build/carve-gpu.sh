#!/bin/sh
# carve-gpu.sh: the shared memory carveout measurements of session 25 (NOTES.md):
# build/micro/pre.cu (a chain of streaming products with an 8-block kernel of 32 or 100
# KiB of shared memory, under the driver's carveout, 100 and 50 per cent); then 8B
# Q8_0 and Q4_K_M tg128 and 8B 64 streams with the default carveout (44 for Q8_0's
# mat-vecs, session 26) against every kernel at 44 (EMBER_CUDA_CARVEOUT_KERNELS=all) and
# the driver's choice (EMBER_CUDA_CARVEOUT=off), alternating; the CUDA goldens at the
# default. Carry bin/dev (build/dev-build.sh); ~6 minutes on an H200.
set -u
MODELS="q4 q8"
. build/gpu-setup.sh /tmp/carve-gpu
(cd build/micro && nvcc -arch=sm_90 -std=c++17 -O3 -o /tmp/pre pre.cu; echo "pre built rc $?") &
wait
/tmp/pre
(cd inference/model/archs && timeout -s KILL 200 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA' >"$L/goldens.log" 2>&1; echo "goldens rc $?")
for r in 1 2; do
	for m in q8 q4; do
		echo "8B $m tg128 default $(q "$E" bench -backend cuda -m /tmp/$m.gguf -p 0 -n 128 -r 3)"
		echo "8B $m tg128 all44   $(EMBER_CUDA_CARVEOUT_KERNELS=all q "$E" bench -backend cuda -m /tmp/$m.gguf -p 0 -n 128 -r 3)"
		echo "8B $m tg128 off     $(EMBER_CUDA_CARVEOUT=off q "$E" bench -backend cuda -m /tmp/$m.gguf -p 0 -n 128 -r 3)"
	done
	echo "8B 64 streams default $(s "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128)"
	echo "8B 64 streams all44   $(EMBER_CUDA_CARVEOUT_KERNELS=all s "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128)"
	echo "8B 64 streams off     $(EMBER_CUDA_CARVEOUT=off s "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128)"
done
