#!/bin/sh
# mmg2-gpu.sh (session 27): mmg on the FFN weights only (mgMinElems), gate and up over one
# layout: TestMMG, then Llama-3.1-8B Q4_K_M at 64 streams with and without mmg (mmg.ptx
# committed from mmg-gpu.sh's $OUT). ~3 minutes. Carry bin/dev.
set -u
MODELS="q4"
. build/gpu-setup.sh /tmp/mmg-gpu
(cd inference/backend/cuda && timeout -s KILL 100 "$R/bin/dev/cuda.test" -test.run 'TestMMG$' -test.v 2>&1 | grep -E "^(--- |ok|PASS|FAIL)|panic" | head -5) &
wait
echo "8B 64 streams, mmg $(s "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128)"
echo "8B 64 streams, off $(EMBER_CUDA_MMG=off s "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128)"
echo "8B 64 streams, mmg $(s "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128)"
