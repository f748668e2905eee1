#!/bin/sh
# next-gpu.sh: session 20's first GPU call: quant.cu's PTX made again (load8 shared by
# quant_q8_k and get_rows_q8_k), then gpu-check.sh's tests on it (deepseek2's included:
# session 19 did not run them on quant_q8_k's warp form), and the batch-1 chain taken
# apart: tg128 of 8B Q4_K_M whole, without the small kernels (EMBER_CUDA_SKIP), and
# without the mat-vecs.
# Where Go is: build/dev-build.sh (bin/dev). On the GPU:
#   sh build/next-gpu.sh   (carry bin/dev; give the call 500 s)
set -u
R=$PWD
for f in bin/dev/*.xz; do [ -e "$f" ] && xz -d -f "$f"; done
chmod +x bin/dev/*
E=$R/bin/dev/ember L=${OUT:-/tmp/next-gpu}
mkdir -p "$L" /tmp/ptx
[ -f /tmp/q4.gguf ] || $E synth /tmp/q4.gguf -preset llama3.1-8b -ftype q4_k_m >/dev/null 2>&1 &
cp kernels/cuda/*.ptx /tmp/ptx/
(cd kernels/cuda && nvcc -arch=sm_90 -ptx -O3 -fmad=false -o /tmp/quant.raw.ptx quant.cu &&
	h=$(cat quant.cu $(LC_ALL=C ls *.cuh) | sha256sum | cut -d" " -f1) &&
	{ echo "// ember-sources-sha256: $h"; cat /tmp/quant.raw.ptx; } >/tmp/ptx/quant.ptx)
cp /tmp/ptx/quant.ptx "$L/quant.ptx"
export EMBER_CUDA_PTX_DIR=/tmp/ptx
timeout -s KILL 330 sh build/gpu-check.sh tests >"$L/check.log" 2>&1
echo "check rc $?"
grep -E "exit|FAIL|panic" "$L/check.log" | head -30
wait
b() { timeout -s KILL 40 "$E" bench -backend cuda "$@" 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f7-8; }
for i in 1 2; do
	echo "tg128 whole $(b -m /tmp/q4.gguf -p 0 -n 128 -r 3)"
	echo "tg128 no small $(EMBER_CUDA_SKIP=add_rms_norm,rope,attention,swiglu b -m /tmp/q4.gguf -p 0 -n 128 -r 3)"
	echo "tg128 no mat-vec $(EMBER_CUDA_SKIP=mmv b -m /tmp/q4.gguf -p 0 -n 128 -r 3)"
	echo "tg128 no attention $(EMBER_CUDA_SKIP=attention b -m /tmp/q4.gguf -p 0 -n 128 -r 3)"
done
