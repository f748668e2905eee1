#!/bin/sh
# gpu-check.sh: the CUDA checks CI cannot run (it has no GPU), on a machine with an
# NVIDIA GPU and its driver: the backend's tests (conformance against the reference,
# fused kernels, cuBLASLt, top-k, PDL), the llama.cpp goldens on the GPU (with products on
# Ember's kernels and forced onto cuBLASLt), deepseek2's GPU tests; then the benchmarks
# of the README (build/bench-cuda.sh, which also runs the serving figures) and the decode
# attention timings of inference/backend/cuda/NOTES.md.
#
#   build/dev-build.sh               # where Go is: bin/dev/{ember,cuda.test,archs.test,deepseek2.test}.xz (or .gz)
#   build/gpu-check.sh [tests|bench] # on the GPU machine, from the repository root (both by default)
#
# With nvcc on the GPU machine, build/gen-ptx.sh first regenerates the PTX from the .cu
# sources; EMBER_CUDA_PTX_DIR=DIR makes the binaries load DIR/*.ptx instead of the
# embedded copies (for kernels changed since the binaries were built).
set -eu
cd "$(dirname "$0")/.."
R=$PWD
for f in bin/dev/*.gz; do [ -e "$f" ] && gunzip -f "$f"; done
for f in bin/dev/*.xz; do
	[ -e "$f" ] || continue
	if command -v xz >/dev/null 2>&1; then
		xz -d -f "$f"
	else # Python's lzma where the xz tool is missing
		python3 -c 'import lzma, sys; open(sys.argv[1][:-3], "wb").write(lzma.open(sys.argv[1]).read())' "$f" && rm "$f"
	fi
done
chmod +x bin/dev/* 2>/dev/null || true
what=${1:-all}
status=0
if [ "$what" != bench ]; then
	# The test binaries run side by side (separate processes share the GPU well), each
	# group under a wall-clock limit, so that a hung kernel costs minutes, not the
	# session's device time: a group's log is printed when it fails.
	logs=$(mktemp -d)
	group() { # name dir limit binary args...
		n=$1 d=$2 l=$3
		shift 3
		(
			rc=0
			cd "$d" && timeout "$l" "$@" >"$logs/$n.log" 2>&1 || rc=$?
			echo $rc >"$logs/$n.rc"
		) &
	}
	C=inference/backend/cuda T=$R/bin/dev/cuda.test
	group attention $C 600 "$T" -test.run 'Attention'
	# TestCublasOutOfMemoryFallsBack fills the GPU's memory: it runs alone, after the
	# others (beside them it made their allocations fail).
	group products $C 600 "$T" -test.run 'MatMul|MMQ|MMV|MatVec|Cublas|Products|TopK|ArgMax' -test.skip 'TestCublasOutOfMemoryFallsBack'
	group conformance $C 600 "$T" -test.run 'Conformance'
	group rest $C 600 "$T" -test.skip 'Attention|MatMul|MMQ|MMV|MatVec|Cublas|Products|TopK|ArgMax|Conformance'
	group goldens inference/model/archs 300 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA' -test.v
	group deepseek2 inference/model/deepseek2 300 "$R/bin/dev/deepseek2.test" -test.run 'CUDA'
	wait
	group oom $C 300 "$T" -test.run 'TestCublasOutOfMemoryFallsBack'
	wait
	for rc in "$logs"/*.rc; do
		n=$(basename "$rc" .rc)
		code=$(cat "$rc")
		echo "$n: exit $code$([ "$code" = 124 ] && echo ' (timed out: a hung kernel?)')"
		if [ "$code" != 0 ]; then
			status=1
			tail -40 "$logs/$n.log"
		fi
	done
fi
if [ "$what" != tests ]; then
	# one layer's batched decode attention (8B and V2-Lite latent shapes), kernel by kernel
	(cd inference/backend/cuda && EMBER_CUDA_BENCH=1 "$R/bin/dev/cuda.test" -test.run 'TestBatchedDecodeAttention' -test.v | grep ' us (')
	build/bench-cuda.sh bin/dev/ember
	PRESETS=deepseek-v2-lite FTYPES=q4_k_m build/bench-cuda.sh bin/dev/ember
fi
exit $status
