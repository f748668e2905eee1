#!/bin/sh
# Session 32, device call 2: mmg in blocks of 256 weight rows (mmg_q4_k_256, four
# warpgroups, one block an SM: each step's activation rows come into shared memory once
# for two tiles). build/micro/mmgb.cu (the gate/up pair both ways beside cuBLAS), then
# the engine at 64 streams with EMBER_CUDA_MMG_ROWS=256 against 128 on the same PTX,
# TestMMG and the layout tests with 256, and mmg_q4_k's stall reasons (profile-cuda.sh
# at AT=75: the measured round's full decode steps, past the warmup round).
set -u
export MODELS=q4
. build/gpu-setup.sh "${OUT:-/tmp/s32c2}"
D=/tmp/pv-256
sh build/ptx-copy.sh $D mmg && cp $D/mmg.ptx "$L/mmg.ptx"
(cd build/micro && nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/mmgb mmgb.cu -lcublas && timeout 120 /tmp/mmgb)
wait
export EMBER_CUDA_PTX_DIR=$D
(cd inference/backend/cuda && EMBER_CUDA_MMG_ROWS=256 timeout -s KILL 150 "$R/bin/dev/cuda.test" -test.run 'TestMMG|TestFusedMMGLayout' -test.v 2>&1 | grep -E "^(--- |PASS|FAIL|ok)" | head -20)
S="$E bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128"
for r in $(seq "${ROUNDS:-3}"); do
	echo "round $r: 256 rows $(EMBER_CUDA_MMG_ROWS=256 s $S) | 128 rows $(s $S)"
done
AT=75 DETAIL="mmg_q4_k" SASS=1 PACK=1 timeout -s KILL 200 sh build/profile-cuda.sh bin/dev/ember /tmp/q4.gguf $L/prof -streams 64 -p 512 -n 128 2>&1 | grep -E "us|==" | head -30
