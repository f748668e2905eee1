#!/bin/sh
# s59-call5.sh: attention_short.ptx made again for a comment-only change (its body must
# equal the committed one), timelines of V2-Lite and the 8B with the done column
# (batch 40 of tg64), and HEAD's figures (bench -p 512 -n 128 -r 3). Local: bin/dev
# (TESTS="cuda"), the usual held-out files.
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s59c5}"
mkdir -p /tmp/as && cp kernels/cuda/*.cu kernels/cuda/*.cuh /tmp/as/ && sh build/ptx-one.sh /tmp/as attention_short && cp /tmp/as/attention_short.ptx "$L/"
(sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED") &
wait
for m in v2 q4; do
	EMBER_CUDA_PTX_DIR=/tmp/tl EMBER_CUDA_TIMELINE=40 timeout -s KILL 120 $E bench -backend cuda -p 0 -n 64 -r 1 -m /tmp/$m.gguf >"$L/tl_${m}.log" 2>&1
	el "$m: $(grep 'cuda timeline' "$L/tl_${m}.log" | tr '\n' ' ')"
done
for m in q4 v2; do
	timeout -s KILL 150 $E bench -backend cuda -p 512 -n 128 -r 3 -m /tmp/$m.gguf 2>&1 | grep '^| ' | tail -2
done
el done
