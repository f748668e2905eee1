#!/bin/sh
# next-gpu.sh: the next session's first calls (NOTES.md, next steps of session 27).
# PART=1 (~2 minutes, no Go binaries needed): build/micro/mmgb.cu, the engine's mmg
# kernels alone on Llama-3.1-8B's shapes at 64 rows against cuBLAS's f16 GEMM, for
# mmg.cu as committed, with build/wip/mmg-ffma.patch (one fused multiply-add a weight,
# the same values), and with that and __launch_bounds__(256, 1) (no register cap).
# PART=2 (~4 minutes, carry bin/dev): MMG_VARIANT=ffma|ffma1 (or empty: the working
# tree's mmg.cu) made into PTX ($OUT/mmg.ptx with its hash line), TestMMG on it, then 8B
# Q4_K_M at 64 streams with EMBER_CUDA_MMG=48 and off, two rounds.
# build/wip/mmg-pair.patch (Go and kernel; it includes mmg-ffma.patch): gate and up in
# one mmg_q4_k launch with no K split, and down's splits added by the last block of each
# tile instead of mmq_reduce (TestMMGQueue checks the launches here; TestMMG gains a
# pair). To run it: `git apply build/wip/mmg-pair.patch && sh build/dev-build.sh`, then
# PART=1 (its mmgb.cu matches the patched kernel) and PART=2 with no MMG_VARIANT.
set -u
PART=${PART:-1}
R=$PWD L=${OUT:-/tmp/next-gpu}
mkdir -p "$L"
variant() { # dir name: a copy of kernels/cuda with the variant's mmg.cu
	rm -rf "$1" && mkdir -p "$1" && cp kernels/cuda/*.cu kernels/cuda/*.cuh kernels/cuda/*.ptx "$1/"
	case $2 in
	ffma | ffma1) (cd "$1" && patch -p3 <"$R/build/wip/mmg-ffma.patch" >/dev/null) ;;
	esac
	[ "$2" = ffma1 ] && sed -i 's/__launch_bounds__(256, 2) mmg_q4_k/__launch_bounds__(256, 1) mmg_q4_k/' "$1/mmg.cu"
	return 0
}
if [ "$PART" = 1 ]; then
	for v in base ffma ffma1; do
		variant /tmp/mg-$v $v
		(cd build/micro && nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -Xptxas -v -DMMG_CU="\"/tmp/mg-$v/mmg.cu\"" \
			-o /tmp/mmgb-$v mmgb.cu -lcublas 2>&1 | grep -A2 "mmg_q4_k" | grep -E "Used|spill" | sed "s/^/$v: /")
		echo "== $v"
		timeout 120 /tmp/mmgb-$v
	done
	exit 0
fi
export MODELS="q4"
. build/gpu-setup.sh "$L"
P=/tmp/mg-engine
variant $P "${MMG_VARIANT:-base}"
(cd $P && nvcc -arch=sm_90a -ptx -O3 -fmad=false -o /tmp/mmg.ptx mmg.cu &&
	{ echo "// ember-sources-sha256: $(cat mmg.cu $(LC_ALL=C ls *.cuh) | sha256sum | cut -d' ' -f1)"; cat /tmp/mmg.ptx; } >mmg.ptx && cp mmg.ptx "$L/")
export EMBER_CUDA_PTX_DIR=$P
(cd inference/backend/cuda && timeout -s KILL 100 "$R/bin/dev/cuda.test" -test.run 'TestMMG$' -test.v 2>&1 | grep -E "^(--- |ok|PASS|FAIL)|panic" | head -5) &
wait
for r in 1 2; do
	echo "8B 64 streams, mmg $(EMBER_CUDA_MMG=48 s "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128)"
	echo "8B 64 streams, off $(s "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128)"
done
