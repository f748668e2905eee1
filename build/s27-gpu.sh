#!/bin/sh
# s27-gpu.sh (session 27, one call, ~8 minutes): TestMoERouting (moe_topk against the
# plain reference); the mmfw experiment of next-gpu.sh PART=3 (its PTX to $OUT/mmfw);
# and whether session 26's skip of moe_topk (+18% on V2-Lite tg128) measured the
# routing or stale expert ids: tg128 whole, without moe_topk, and without the router
# product and moe_topk. Carry bin/dev (build/dev-build.sh).
set -u
MODELS="q4 v2"
. build/gpu-setup.sh /tmp/s27-gpu
(cd inference/backend/cuda && timeout -s KILL 150 "$R/bin/dev/cuda.test" -test.run 'TestMoERouting' -test.v 2>&1 | grep -E "^(--- |ok|PASS|FAIL)|panic" | head)
wait
for r in 1 2; do
	echo "v2 whole step $(q "$E" bench -backend cuda -m /tmp/v2.gguf -p 0 -n 128 -r 3)"
	echo "v2 without moe_topk $(EMBER_CUDA_SKIP=moe_topk q "$E" bench -backend cuda -m /tmp/v2.gguf -p 0 -n 128 -r 3)"
	echo "v2 without router, moe_topk $(EMBER_CUDA_SKIP=moe_topk,mmv_f32_1 q "$E" bench -backend cuda -m /tmp/v2.gguf -p 0 -n 128 -r 3)"
done
PART=3 sh build/next-gpu.sh 2>&1 | grep -v "^$"
