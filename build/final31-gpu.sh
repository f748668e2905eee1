#!/bin/sh
# final31-gpu.sh: session 31's last call, on the embedded PTX: the fusion tests, one
# 64-stream run with EMBER_CUDA_STATS=1 (the kernels of a step, to see which launches it
# still has), then 8B Q4_K_M at 64 streams with both of the session's fusions against
# neither (EMBER_CUDA_NO_LAY_FUSE=1 EMBER_CUDA_NO_ATTENTION_HALF=1), two rounds, and
# tg128. Carry bin/dev (build/dev-build.sh).
set -u
export MODELS=q4
. build/gpu-setup.sh "${OUT:-/tmp/final31}"
(cd inference/backend/cuda && timeout -s KILL 200 "$R/bin/dev/cuda.test" -test.run 'TestFusedAttentionHalf|TestFusedQ8KHalf|TestFusedAttentionQ8K|TestFusedMMGLayout|TestPTX' 2>&1 | tail -8)
wait
S="$E bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128"
EMBER_CUDA_STATS=1 timeout -s KILL 120 $S >"$L/stats.txt" 2>&1
grep -c act_f16 "$L/stats.txt"; grep -E 'kernels|act_f16|mmg_xl' "$L/stats.txt" | head -5
for r in 1 2; do
	echo "round $r: both $(s $S) | neither $(EMBER_CUDA_NO_LAY_FUSE=1 EMBER_CUDA_NO_ATTENTION_HALF=1 s $S)"
done
echo "tg128 $(q $E bench -m /tmp/q4.gguf -backend cuda -p 0 -n 128 -r 3)"
