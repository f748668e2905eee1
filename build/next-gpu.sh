#!/bin/sh
# next-gpu.sh: session 17's GPU call for the fused router (mmv_f32_route: the router
# product, the routing and the experts' Q8_K rounding in one launch): every module's
# PTX made here (route.cuh and q8kwarp.cuh are new, so every module's source hash
# changed) and brought back through $OUT; the CUDA suite (but the OOM test), the goldens
# and deepseek2's CUDA tests on it; then V2-Lite and 8B decode, the embedded PTX (old)
# against it (new), interleaved.
# Where Go is: build/dev-build.sh (bin/dev). On the GPU:
#   sh build/next-gpu.sh   (carry bin/dev; give the call 600 s)
set -u
R=$PWD
for f in bin/dev/*.xz; do [ -e "$f" ] && xz -d -f "$f"; done
chmod +x bin/dev/*
E=$R/bin/dev/ember L=${OUT:-/tmp/next-gpu} P=/tmp/ptx3
mkdir -p "$L" "$P"
[ -f /tmp/v2.gguf ] || $E synth /tmp/v2.gguf -preset deepseek-v2-lite -ftype q4_k_m >/dev/null 2>&1 &
[ -f /tmp/q4.gguf ] || $E synth /tmp/q4.gguf -preset llama3.1-8b -ftype q4_k_m >/dev/null 2>&1 &
(cd kernels/cuda && for c in *.cu; do
	m=${c%.cu}
	(h=$(cat $m.cu $(LC_ALL=C ls *.cuh) | sha256sum | cut -d" " -f1) &&
		nvcc -arch=sm_90 -ptx -O3 -fmad=false -o /tmp/$m.raw.ptx $m.cu 2>/tmp/$m.nvcc.log &&
		{ echo "// ember-sources-sha256: $h"; cat /tmp/$m.raw.ptx; } >$P/$m.ptx && cp $P/$m.ptx "$L/" || echo "nvcc $m failed: $(tail -3 /tmp/$m.nvcc.log)") &
done; wait)
echo "modules: $(ls $P | wc -l)"
C=inference/backend/cuda T=$R/bin/dev/cuda.test
g() { # name dir limit binary args...
	n=$1 d=$2 l=$3
	shift 3
	(cd "$d" && EMBER_CUDA_PTX_DIR=$P timeout -s KILL "$l" "$@" >"$L/$n.log" 2>&1; echo "$n rc $?" >>"$L/$n.log") &
}
g attention $C 300 "$T" -test.run 'Attention'
g products $C 300 "$T" -test.run 'MatMul|MMQ|MMV|MatVec|Cublas|Products|TopK|ArgMax|Lt' -test.skip 'TestCublasOutOfMemoryFallsBack'
g conformance $C 300 "$T" -test.run 'Conformance'
g rest $C 300 "$T" -test.skip 'Attention|MatMul|MMQ|MMV|MatVec|Cublas|Products|TopK|ArgMax|Conformance|Lt|KernelNames'
g goldens inference/model/archs 300 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA'
g deepseek2 inference/model/deepseek2 300 "$R/bin/dev/deepseek2.test" -test.run 'CUDA'
wait
for f in "$L"/*.log; do
	tail -1 "$f"
	grep -E "^--- FAIL|_test.go:[0-9]+:" "$f" | head -8
done
b() { timeout -s KILL 90 "$E" bench -backend cuda "$@" 2>&1 | grep '^| \|ember:' | tail -1 | cut -d'|' -f7-8; }
for i in 1 2 3; do
	echo "V2-Lite tg128: old $(b -m /tmp/v2.gguf -p 0 -n 128 -r 3) new $(EMBER_CUDA_PTX_DIR=$P b -m /tmp/v2.gguf -p 0 -n 128 -r 3)"
done
echo "8B tg128: old $(b -m /tmp/q4.gguf -p 0 -n 128 -r 3) new $(EMBER_CUDA_PTX_DIR=$P b -m /tmp/q4.gguf -p 0 -n 128 -r 3)"
echo "V2-Lite 64 streams: new $(EMBER_CUDA_PTX_DIR=$P b -m /tmp/v2.gguf -streams 64 -p 512 -n 128)"
