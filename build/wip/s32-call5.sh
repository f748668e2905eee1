#!/bin/sh
# Session 32, device call 5: call 4 again with the packed copy's scale chunks mended
# (160-byte rows hold four sub-blocks' pairs a chunk, not one). mmg.ptx from the tree
# and, as a fallback, mmg-192.ptx (-DMG_RB=192) into $OUT; build/micro/mmgb.cu on the
# tree; the tests; the engine at 64 streams with and without Q4_K down on mmg.
set -u
export MODELS=q4
. build/gpu-setup.sh "${OUT:-/tmp/s32c5}"
D=/tmp/pv-t
sh build/ptx-copy.sh $D mmg && cp $D/mmg.ptx "$L/mmg.ptx"
(rm -rf /tmp/pv-192 && mkdir /tmp/pv-192 && cp kernels/cuda/*.cu kernels/cuda/*.cuh /tmp/pv-192/ && sh build/ptx-one.sh /tmp/pv-192 mmg -DMG_RB=192 && cp /tmp/pv-192/mmg.ptx "$L/mmg-192.ptx") &
(cd build/micro && nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/mmgb mmgb.cu -lcublas && timeout 120 /tmp/mmgb)
wait
export EMBER_CUDA_PTX_DIR=$D
(cd inference/backend/cuda && timeout -s KILL 300 "$R/bin/dev/cuda.test" -test.run 'TestMMG|TestMMF|TestFused|TestConformance' 2>&1 | tail -6)
(cd inference/model/archs && timeout -s KILL 300 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA' 2>&1 | tail -3) &
(cd inference/model/deepseek2 && timeout -s KILL 300 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3) &
wait
S="$E bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128"
for r in $(seq "${ROUNDS:-3}"); do
	echo "round $r: pairs $(s $S) | pairs and Q4_K down $(EMBER_CUDA_MMG_SINGLE=1 s $S)"
done
