#!/bin/sh
# (After it ran, its repeated steps were put into gpu-setup.sh's variant, phases and
# final helpers; the steps are the same.)
# (Kept as the record. The variant sources it names are now patches against the landed
# kernel, s65-call3's D1: s65-call1-kernel.patch (call 1's kernel) and
# s65-call1-phases.patch (its stamps, on top of it); s65-vA.patch, s65-vB.patch,
# s65-vC.patch (call 2's tree), s65-phases-on-vC.patch (on top of C); s65-vD2.patch.)
# s65-call2.sh: three steps on attention_short's body (all bit-for-bit the old arithmetic):
# A (build/wip/s65-vA-attention_short.cu): pass 1 without a branch a chunk (lanes past the
# tile score row 0), so a thread's chunk loads issue together; B (s65-vB): A + pass 2
# for one head spread over the block (the max from pass 1's warps, exponentials by every
# thread, the sum by every warp alike, probabilities formed in P V); C (the tree): B + the
# output's partial sums and its Q8_K rounding by the same warps without a barrier. Tests
# (bits) on C narrow and wide, B and A wide, deepseek2's CUDA tests on C wide; phases of C
# (build/wip/s65-phases-attention_short.cu) both widths; rotated tg128 rounds of V2-Lite:
# call 1's PTX wide (the base), A, B, C wide, C narrow.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s65c2}"
variant /tmp/vA build/wip/s65-vA-attention_short.cu &
variant /tmp/vB build/wip/s65-vB-attention_short.cu &
variant /tmp/vC kernels/cuda/attention_short.cu &
variant /tmp/ph build/wip/s65-phases-attention_short.cu &
mkdir -p /tmp/v1 && cp kernels/cuda/*.ptx /tmp/v1/ && cp build/wip/s65-call1-attention_short.ptx /tmp/v1/attention_short.ptx
wait
cp /tmp/vC/attention_short.ptx "$L/" && cp /tmp/vA/attention_short.ptx "$L/vA-attention_short.ptx" && cp /tmp/vB/attention_short.ptx "$L/vB-attention_short.ptx"
el "model and PTX ready"
T='TestAttentionLatentBits|TestFusedAttentionQ8K|TestShortAttention|TestKernelNamesExist|TestEmbeddedKernelsWait'
export EMBER_CUDA_PTX_DIR=/tmp/vC
tgroup 0 "$T" 280
export EMBER_CUDA_SHORT_WIDE=1 # read by the subshells started from here on
tgroup 1 "$T" 280
(cd inference/model/deepseek2 && timeout -s KILL 280 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3 | sed 's/^/deepseek2 C wide: /') &
export EMBER_CUDA_PTX_DIR=/tmp/vB
tgroup 2 'TestAttentionLatentBits|TestFusedAttentionQ8K|TestShortAttention' 280
export EMBER_CUDA_PTX_DIR=/tmp/vA
tgroup 3 'TestAttentionLatentBits|TestFusedAttentionQ8K|TestShortAttention' 280
wait
unset EMBER_CUDA_PTX_DIR EMBER_CUDA_SHORT_WIDE
el "tests done"
phases ph.log /tmp/ph EMBER_CUDA_SHORT_WIDE=
phases ph1.log /tmp/ph EMBER_CUDA_SHORT_WIDE=1
W=EMBER_CUDA_SHORT_WIDE=1
sweep 6 v2 "EMBER_CUDA_PTX_DIR=/tmp/v1 $W $E" "EMBER_CUDA_PTX_DIR=/tmp/vA $W $E" "EMBER_CUDA_PTX_DIR=/tmp/vB $W $E" \
	"EMBER_CUDA_PTX_DIR=/tmp/vC $W $E" "EMBER_CUDA_PTX_DIR=/tmp/vC $E"
el done
