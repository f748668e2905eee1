#!/bin/sh
# s64-call6.sh (session 64): attention_short576's pass 1 with the thread's query chunks
# in registers (call 5's phases: pass 1 grows from 0.9 to 3.7 us between positions 12
# and 125, P V from 0.6 to 2.2; the tile's copies 0.95 -> 1.06). attention_short.ptx
# from the tree (returned), the short and latent attention tests and deepseek2's CUDA
# tests on it, then rotated tg128 rounds of V2-Lite, embedded against it.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s64c6}"
rm -rf /tmp/q1 && mkdir -p /tmp/q1 && cp kernels/cuda/*.cu kernels/cuda/*.cuh kernels/cuda/*.ptx /tmp/q1/ &&
	sh build/ptx-one.sh /tmp/q1 attention_short 2>/dev/null && cp /tmp/q1/attention_short.ptx "$L/" || el "PTX FAILED"
wait
el "model and PTX ready"
export EMBER_CUDA_PTX_DIR=/tmp/q1
tgroup 0 'TestShortAttention|TestAttentionLatentBits|TestLatentAttention' 60
(cd inference/model/deepseek2 && timeout -s KILL 60 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3 | sed 's/^/deepseek2: /') &
wait
unset EMBER_CUDA_PTX_DIR
el "tests done"
sweep 3 v2 "$E" "EMBER_CUDA_PTX_DIR=/tmp/q1 $E"
el done
