#!/bin/sh
# s65-call1.sh (written in session 64 for the next device session, not yet run):
# attention_short's Q8_K rounding by warps (build/wip/short-q8warp.patch, NOTES session
# 64 next step 3). Before the call: `git apply build/wip/short-q8warp.patch`, then
# `cp kernels/cuda/attention_short.cu build/wip/s64-phases-attention_short.cu && patch
# build/wip/s64-phases-attention_short.cu <build/wip/short-phases.patch` (the stamps on
# the new kernel; fix any hunk that no longer applies by hand), build bin/dev (TESTS="cuda
# deepseek2"), hold testdata/vocab, tokenizers and the non-deepseek2 goldens out of the
# carry. Then: attention_short.ptx from the tree (returned), the latent and fused-Q8K
# attention tests and deepseek2's CUDA tests on it (the bits must not change), the
# phases at positions 12 and 125 (the end phase should shrink from ~1.1 us), rotated
# tg128 rounds of V2-Lite against the embedded PTX.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s65c1}"
mkdir -p /tmp/q8w /tmp/ph
cp kernels/cuda/*.cu kernels/cuda/*.cuh kernels/cuda/*.ptx /tmp/q8w/ && sh build/ptx-one.sh /tmp/q8w attention_short 2>/dev/null &&
	cp /tmp/q8w/attention_short.ptx "$L/" || el "PTX FAILED"
cp kernels/cuda/*.cu kernels/cuda/*.cuh kernels/cuda/*.ptx /tmp/ph/ && cp build/wip/s64-phases-attention_short.cu /tmp/ph/attention_short.cu &&
	sh build/ptx-one.sh /tmp/ph attention_short 2>/dev/null || el "PHASES PTX FAILED"
wait
el "model and PTX ready"
export EMBER_CUDA_PTX_DIR=/tmp/q8w
tgroup 0 'TestAttentionLatentBits|TestFusedAttentionQ8K|TestShortAttention|TestKernelNamesExist|TestEmbeddedKernelsWait' 240
(cd inference/model/deepseek2 && timeout -s KILL 240 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3 | sed 's/^/deepseek2: /') &
wait
unset EMBER_CUDA_PTX_DIR
el "tests done"
EMBER_CUDA_PTX_DIR=/tmp/ph timeout -s KILL 120 "$E" bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/v2.gguf >"$L/ph.log" 2>&1
ph_sum "$L/ph.log"
sweep 6 v2 "$E" "EMBER_CUDA_PTX_DIR=/tmp/q8w $E"
el done
