#!/bin/sh
# s64-call5.sh (session 64): where attention_short576's time goes at positions 12 and
# 125. build/wip/s64-phases-attention_short.cu is the committed kernel with the global
# timer read at its entry, after its early copies are issued, after its wait, when the
# tile is ready, after each pass, after the output and at its end; blocks 0 and 15 of
# each launch at those positions printf them (ns after the wait, and the SM). One tg128
# run of V2-Lite on it; the lines averaged per position and block.
# Before the call (the instrumented kernel, not kept in the tree): cp kernels/cuda/attention_short.cu
# build/wip/s64-phases-attention_short.cu && patch build/wip/s64-phases-attention_short.cu <build/wip/short-phases.patch
# (the patch is against 088701a's attention_short.cu).
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s64c5}"
rm -rf /tmp/ph && mkdir -p /tmp/ph && cp kernels/cuda/*.cu kernels/cuda/*.cuh kernels/cuda/*.ptx /tmp/ph/ &&
	cp build/wip/s64-phases-attention_short.cu /tmp/ph/attention_short.cu && sh build/ptx-one.sh /tmp/ph attention_short 2>/dev/null || el "PTX FAILED"
wait
el "model and PTX ready"
EMBER_CUDA_PTX_DIR=/tmp/ph timeout -s KILL 120 "$E" bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/v2.gguf >"$L/ph.log" 2>&1
grep '^| ' "$L/ph.log" | tail -1
grep -c '^PH' "$L/ph.log"
ph_sum "$L/ph.log"
el done
