#!/bin/sh
# att-gpu.sh: session 31's call for decode attention writing the output projection's f16
# rows (EMBER_CUDA_NO_ATTENTION_HALF=1 turns it off): every module's PTX made from the
# tree (common.cuh changed: $OUT/ptx.tgz, to commit), then 8B Q4_K_M at 64 streams with
# and without the fusion, ROUNDS rounds alternating, and tg128, all on the new PTX
# (EMBER_CUDA_PTX_DIR); then the fusion tests, the attention, mmg and conformance tests,
# the CUDA goldens and deepseek2's CUDA tests. Carry bin/dev (build/dev-build.sh).
set -u
export MODELS="${MODELS:-q4}"
. build/gpu-setup.sh "${OUT:-/tmp/att-gpu}"
D=/tmp/pv-all
sh build/ptx-copy.sh $D
(cd $D && tar czf "$L/ptx.tgz" *.ptx)
wait
export EMBER_CUDA_PTX_DIR=$D
S="$E bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128"
for r in $(seq "${ROUNDS:-3}"); do
	echo "round $r: fused $(s $S) | not fused $(EMBER_CUDA_NO_ATTENTION_HALF=1 s $S)"
done
echo "tg128 $(q $E bench -m /tmp/q4.gguf -backend cuda -p 0 -n 128 -r 3)"
(cd inference/backend/cuda && timeout -s KILL 400 "$R/bin/dev/cuda.test" -test.run "${TESTS:-TestFused|TestMMG|TestConformance|TestAttention|TestDec}" 2>&1 | tail -15) &
(cd inference/model/archs && timeout -s KILL 300 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA' 2>&1 | tail -5) &
(cd inference/model/deepseek2 && timeout -s KILL 300 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -5) &
wait
