#!/bin/sh
# Session 32, device call 4: mmg's f16 dequantization with 160-byte packed rows (the
# f16 pair (d1, -m1) of each sub-block once, its halves spread by the fma's operand
# selects). mmg.ptx made from the tree into $OUT; build/micro/mmgb.cu at 160 and 192
# bytes a row; the engine at 64 streams on the new PTX with and without down (single
# Q4_K products with K splits) on mmg (EMBER_CUDA_MMG_SINGLE=1); mmg's and the fusion
# tests, the CUDA goldens and deepseek2's CUDA tests on it.
set -u
export MODELS=q4
. build/gpu-setup.sh "${OUT:-/tmp/s32c4}"
D=/tmp/pv-t
sh build/ptx-copy.sh $D mmg && cp $D/mmg.ptx "$L/mmg.ptx"
(cd build/micro && for v in 160 192; do
	nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -DMG_RB=$v -o /tmp/mmgb-$v mmgb.cu -lcublas &
done; wait; for v in 160 192; do echo "== MG_RB=$v"; timeout 120 /tmp/mmgb-$v; done)
wait
export EMBER_CUDA_PTX_DIR=$D
S="$E bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128"
for r in $(seq "${ROUNDS:-3}"); do
	echo "round $r: pairs $(s $S) | pairs and Q4_K down $(EMBER_CUDA_MMG_SINGLE=1 s $S)"
done
(cd inference/backend/cuda && timeout -s KILL 300 "$R/bin/dev/cuda.test" -test.run 'TestMMG|TestMMF|TestFused|TestConformance' 2>&1 | tail -6) &
(cd inference/model/archs && timeout -s KILL 300 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA' 2>&1 | tail -3) &
(cd inference/model/deepseek2 && timeout -s KILL 300 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3) &
wait
