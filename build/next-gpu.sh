#!/bin/sh
# next-gpu.sh: session 19's sixth GPU call (short: the session's device time was nearly
# spent): quant_q8_k as a warp a 256-element block (quant.cu; only quant.ptx changes),
# its PTX made here and tried through EMBER_CUDA_PTX_DIR: the conformance and fused
# tests and the CUDA goldens, then pp512 against the embedded PTX, interleaved.
# Where Go is: build/dev-build.sh (bin/dev). On the GPU:
#   sh build/next-gpu.sh   (carry bin/dev; give the call 200 s)
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
C=inference/backend/cuda T=$R/bin/dev/cuda.test
g() { # name dir limit binary args...
	n=$1 d=$2 l=$3
	shift 3
	(cd "$d" && timeout -s KILL "$l" "$@" >"$L/$n.log" 2>&1; echo "$n rc $?" >>"$L/$n.log") &
}
g conf $C 80 "$T" -test.run 'Conformance$|FusedSwiGLUQ8K|FusedGetRowsQ8K|FusedDecoderLayers|MMQ'
g goldens inference/model/archs 80 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA'
wait
for f in "$L"/*.log; do
	tail -1 "$f"
	grep -E "^--- FAIL|_test.go:[0-9]+:|^panic|SIGSEGV" "$f" | head -8
done
b() { timeout -s KILL 40 "$E" bench -backend cuda "$@" 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8; }
for i in 1 2; do
	echo "pp512 new $(b -m /tmp/q4.gguf -p 512 -n 0 -r 3)"
	echo "pp512 old $(EMBER_CUDA_PTX_DIR= b -m /tmp/q4.gguf -p 512 -n 0 -r 3)"
done
rm -f "$L"/*.log
