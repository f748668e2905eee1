#!/bin/sh
# next-gpu.sh: session 26's GPU checks. The default carveout is now 44 per cent for the
# batch-1 mat-vecs only (carveout.go: EMBER_CUDA_CARVEOUT, EMBER_CUDA_CARVEOUT_KERNELS).
# PART=1: the mat-vec tests, deepseek2's GPU tests and the CUDA goldens on it; then the
# default against the driver's choice for every kernel (EMBER_CUDA_CARVEOUT=off),
# alternating, two rounds: 8B Q8_0 and Q4_K_M tg128, DeepSeek-V2-Lite tg128 and 64
# streams, 8B 64 streams and pp512; then the mat-vecs' percentage swept (30, 44, 54, 66,
# 78) for Q8_0 and Q4_K_M. ~9 minutes.
# Carry bin/dev (ember, cuda.test, archs.test, deepseek2.test as .xz: build/dev-build.sh).
PART=${PART:-1}
set -u
. build/gpu-setup.sh /tmp/next-gpu
if [ -z "${SKIP_TESTS:-}" ]; then
(cd inference/backend/cuda && timeout -s KILL 150 "$R/bin/dev/cuda.test" -test.run 'TestMatVecBatch1|Conformance$' -test.v >"$L/tests.log" 2>&1; echo "cuda tests rc $?") &
(cd inference/model/deepseek2 && timeout -s KILL 150 "$R/bin/dev/deepseek2.test" >"$L/ds2.log" 2>&1; echo "deepseek2 tests rc $?") &
(cd inference/model/archs && timeout -s KILL 150 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA' >"$L/goldens.log" 2>&1; echo "goldens rc $?") &
fi
wait
grep -E "^--- FAIL|^ok|^PASS|^FAIL|panic" "$L"/*.log | head -30
for r in 1 2; do
	for c in default off; do
		[ $c = off ] && export EMBER_CUDA_CARVEOUT=off || unset EMBER_CUDA_CARVEOUT
		echo "carve=$c 8B q8_0 tg128 $(q "$E" bench -backend cuda -m /tmp/q8.gguf -p 0 -n 128 -r 3)"
		echo "carve=$c 8B q4_k_m tg128 $(q "$E" bench -backend cuda -m /tmp/q4.gguf -p 0 -n 128 -r 3)"
		echo "carve=$c v2 tg128 $(q "$E" bench -backend cuda -m /tmp/v2.gguf -p 0 -n 128 -r 3)"
		echo "carve=$c v2 64 streams $(s "$E" bench -m /tmp/v2.gguf -backend cuda -streams 64 -p 512 -n 128)"
		echo "carve=$c 8B 64 streams $(s "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128)"
		[ $r = 1 ] && echo "carve=$c 8B pp512 $(p "$E" bench -backend cuda -m /tmp/q4.gguf -p 512 -n 0 -r 3)"
	done
done
unset EMBER_CUDA_CARVEOUT
for c in 30 54 66 78 44; do
	for m in q8 q4; do
		echo "mmv carve=$c 8B $m tg128 $(EMBER_CUDA_CARVEOUT=$c q "$E" bench -backend cuda -m /tmp/$m.gguf -p 0 -n 128 -r 3)"
	done
done
echo "greedy q8 (a0f79f57c7154598541d0a928c172ed5 before) $("$E" run -backend cuda -m /tmp/q8.gguf -p "The quick brown fox" -n 48 -temp 0 2>/dev/null | md5sum)"
