#!/bin/sh
# next-gpu.sh: the next session's first calls (NOTES.md, next steps of session 26).
# PART=1 (~8 minutes): build/skip-gpu.sh for DeepSeek-V2-Lite: which launch of a
# batch-1 step, left out, shortens it.
# PART=2 (~4 minutes): ncu's sections for mmf_q4_k and mmq_q4_k on Llama-3.1-8B's
# 14336x4096 Q4_K at 64 rows (TestPrefillProducts), to confirm or refute that mmf is
# bound by its shared-memory reads of the activation fragments (NOTES.md: ~512 KiB a
# block a step); $OUT/mmf-ncu.txt and $OUT/mmq-ncu.txt.
# PART=3 (~6 minutes): build/wip/mmfw.patch (mmfw_q4_k, _q6_k: mmf's 64-row tiles in 8
# warps of 32 weight rows, half the shared-memory reads): its PTX (with the hash line,
# in $OUT/mmfw to commit if it wins), TestMMFWideBits (mmf's bits) and TestMMF on it,
# TestPrefillProducts at 32 and 64 rows with and without it, and 8B at 64 streams on
# mmf (EMBER_CUDA_MMF=16, f16 copies off) with and without it, against the default.
# Carry bin/dev (build/dev-build.sh).
PART=${PART:-1}
set -u
if [ $PART = 1 ]; then
	exec sh build/skip-gpu.sh
fi
if [ $PART = 3 ]; then
	MODELS="q4"
	. build/gpu-setup.sh /tmp/next-gpu
	P=/tmp/mmfw; rm -rf $P; mkdir -p $P; cp kernels/cuda/*.ptx kernels/cuda/*.cu kernels/cuda/*.cuh $P/
	(cd $P && patch -p3 <"$R/build/wip/mmfw.patch" >/dev/null && nvcc -arch=sm_90 -ptx -O3 -fmad=false -o /tmp/mmfw.ptx mmf.cu 2>/dev/null &&
		{ echo "// ember-sources-sha256: $(cat mmf.cu $(LC_ALL=C ls *.cuh) | sha256sum | cut -d' ' -f1)"; cat /tmp/mmfw.ptx; } >mmf.ptx &&
		mkdir -p "$L/mmfw" && cp mmf.ptx "$L/mmfw/"; echo "mmfw ptx rc $?")
	(cd $P && nvcc -arch=sm_90 -O3 -fmad=false -cubin -Xptxas -v -o /dev/null mmf.cu 2>&1 | grep -A3 "entry function 'mmfw_q\|entry function 'mmf_q" | grep 'entry\|Used\|spill')
	export EMBER_CUDA_PTX_DIR=$P
	wait
	(cd inference/backend/cuda && timeout -s KILL 150 "$R/bin/dev/cuda.test" -test.run 'TestMMFWideBits' -test.v 2>&1 | tail -4
	 EMBER_CUDA_MMF_WIDE=1 timeout -s KILL 150 "$R/bin/dev/cuda.test" -test.run 'TestMMF$' 2>&1 | tail -2)
	for w in "" 1; do
		(cd inference/backend/cuda && EMBER_CUDA_MMF_WIDE=$w EMBER_CUDA_BENCH=1 EMBER_CUDA_BENCH_ROWS=32,64 timeout -s KILL 150 "$R/bin/dev/cuda.test" -test.run TestPrefillProducts -test.v 2>&1 | grep -E 'rows:' | sed "s/^/wide=$w /")
	done
	for w in "" 1 "" 1; do
		echo "8B 64 streams on mmf, wide=$w $(EMBER_CUDA_MMF=16 EMBER_CUDA_F16_COPIES=off EMBER_CUDA_MMF_WIDE=$w s "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128)"
	done
	echo "8B 64 streams, default $(s "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128)"
	exit 0
fi
MODELS=""
. build/gpu-setup.sh /tmp/next-gpu
cd inference/backend/cuda
for k in mmf_q4_k mmq_q4_k; do
	EMBER_CUDA_BENCH=1 EMBER_CUDA_BENCH_ROWS=64 EMBER_CUDA_BENCH_SHAPES=14336x4096 timeout -s KILL 200 \
		ncu --kernel-name "$k" --launch-skip 2 --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis \
		--section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats \
		"$R/bin/dev/cuda.test" -test.run TestPrefillProducts -test.v >"$L/${k%%_*}-ncu.txt" 2>&1
	echo "$k ncu rc $?"
	grep -E "Duration|Memory Throughput|Shared|L1/TEX Hit|Issue Slots|Warp Cycles Per Issued|Registers|Achieved Occupancy|Stall" "$L/${k%%_*}-ncu.txt" | head -30
done
