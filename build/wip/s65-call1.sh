#!/bin/sh
# (After it ran, its repeated steps were put into gpu-setup.sh's variant, phases and
# final helpers; the steps are the same.)
# (Kept as the record. The variant sources it names are now patches against the landed
# kernel, s65-call3's D1: s65-call1-kernel.patch (call 1's kernel) and
# s65-call1-phases.patch (its stamps, on top of it); s65-vA.patch, s65-vB.patch,
# s65-vC.patch (call 2's tree), s65-phases-on-vC.patch (on top of C); s65-vD2.patch.)
# s65-call1.sh: attention_short's Q8_K rounding by warps (build/wip/short-q8warp.patch,
# now in the tree) and attention_short576w (the latent attention on 512 threads,
# EMBER_CUDA_SHORT_WIDE). attention_short.ptx from the tree (returned); the short, latent
# and fused-Q8K attention tests and deepseek2's CUDA tests on it, with and without the
# wide kernel; the phases at positions 12 and 125 (build/wip/s64-phases-attention_short.cu:
# the tree's kernel with short-phases.patch's stamps) both ways; rotated tg128 rounds of
# V2-Lite: the embedded PTX (the old rounding), the new PTX, the new PTX wide.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s65c1}"
variant /tmp/q8w kernels/cuda/attention_short.cu && cp /tmp/q8w/attention_short.ptx "$L/"
variant /tmp/ph build/wip/s64-phases-attention_short.cu
wait
el "model and PTX ready"
export EMBER_CUDA_PTX_DIR=/tmp/q8w
T='TestAttentionLatentBits|TestFusedAttentionQ8K|TestShortAttention|TestKernelNamesExist|TestEmbeddedKernelsWait'
tgroup 0 "$T" 240
export EMBER_CUDA_SHORT_WIDE=1 # read by the subshell tgroup starts now
tgroup 1 "$T" 240
unset EMBER_CUDA_SHORT_WIDE
(cd inference/model/deepseek2 && timeout -s KILL 240 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3 | sed 's/^/deepseek2: /') &
(cd inference/model/deepseek2 && EMBER_CUDA_SHORT_WIDE=1 timeout -s KILL 240 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3 | sed 's/^/deepseek2 wide: /') &
wait
unset EMBER_CUDA_PTX_DIR
el "tests done"
phases ph.log /tmp/ph EMBER_CUDA_SHORT_WIDE=
phases ph1.log /tmp/ph EMBER_CUDA_SHORT_WIDE=1
sweep 6 v2 "$E" "EMBER_CUDA_PTX_DIR=/tmp/q8w $E" "EMBER_CUDA_PTX_DIR=/tmp/q8w EMBER_CUDA_SHORT_WIDE=1 $E"
el done
