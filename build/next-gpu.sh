#!/bin/sh
# next-gpu.sh: the next session's first calls (NOTES.md, next steps of session 26).
# PART=1 (~8 minutes): build/skip-gpu.sh for DeepSeek-V2-Lite: which launch of a
# batch-1 step, left out, shortens it.
# PART=2 (~4 minutes): ncu's sections for mmf_q4_k and mmq_q4_k on Llama-3.1-8B's
# 14336x4096 Q4_K at 64 rows (TestPrefillProducts), to confirm or refute that mmf is
# bound by its shared-memory reads of the activation fragments (NOTES.md: ~512 KiB a
# block a step); $OUT/mmf-ncu.txt and $OUT/mmq-ncu.txt.
# Carry bin/dev (build/dev-build.sh).
PART=${PART:-1}
set -u
if [ $PART = 1 ]; then
	exec sh build/skip-gpu.sh
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
