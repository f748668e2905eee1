#!/bin/sh
# (After it ran, its repeated steps were put into gpu-setup.sh's variant, phases and
# final helpers; the steps are the same.)
# (Kept as the record. The variant sources it names are now patches against the landed
# kernel, s65-call3's D1: s65-call1-kernel.patch (call 1's kernel) and
# s65-call1-phases.patch (its stamps, on top of it); s65-vA.patch, s65-vB.patch,
# s65-vC.patch (call 2's tree), s65-phases-on-vC.patch (on top of C); s65-vD2.patch.)
# s65-call3.sh: call 2's A, B and C all lost to call 1's kernel (wide) by ~1%: A's
# branch-free pass 1 makes every warp score row 0 at short rows (pass 1 at position 12
# 0.7 -> 1.7 us), C's two-warp output sums are slower than the block's. D1
# (build/wip/s65-vD1-attention_short.cu): call 1's kernel with B's pass 2 (the max from pass
# 1, exponentials by the block, probabilities formed in P V); D2 (s65-vD2): D1 with pass 1
# branch-free inside warps whose first position is in the tile (a warp's branch, hoisted).
# Tests (bits) on both, wide; rotated tg128 rounds of V2-Lite wide: call 1's PTX, D1, D2;
# then bench -p 512 -n 128 -r 3: V2-Lite on the three, the 8B on the embedded PTX.
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s65c3}"
variant /tmp/vD1 build/wip/s65-vD1-attention_short.cu &
variant /tmp/vD2 build/wip/s65-vD2-attention_short.cu &
mkdir -p /tmp/v1 && cp kernels/cuda/*.ptx /tmp/v1/ && cp build/wip/s65-call1-attention_short.ptx /tmp/v1/attention_short.ptx
wait
cp /tmp/vD1/attention_short.ptx "$L/vD1-attention_short.ptx" && cp /tmp/vD2/attention_short.ptx "$L/vD2-attention_short.ptx"
el "model and PTX ready"
export EMBER_CUDA_SHORT_WIDE=1 # read by the subshells started from here on
for v in D1 D2; do
	export EMBER_CUDA_PTX_DIR=/tmp/v$v
	tgroup $v 'TestAttentionLatentBits|TestFusedAttentionQ8K|TestShortAttention|TestKernelNamesExist|TestEmbeddedKernelsWait' 280
	(cd inference/model/deepseek2 && timeout -s KILL 280 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3 | sed "s/^/deepseek2 $v wide: /") &
done
wait
unset EMBER_CUDA_PTX_DIR EMBER_CUDA_SHORT_WIDE
el "tests done"
W=EMBER_CUDA_SHORT_WIDE=1
sweep 6 v2 "EMBER_CUDA_PTX_DIR=/tmp/v1 $W $E" "EMBER_CUDA_PTX_DIR=/tmp/vD1 $W $E" "EMBER_CUDA_PTX_DIR=/tmp/vD2 $W $E"
for v in v1 vD1 vD2; do
	el "v2 $v wide: $(p env EMBER_CUDA_PTX_DIR=/tmp/$v $W "$E" bench -backend cuda -p 512 -n 128 -r 3 -m /tmp/v2.gguf)"
done
el "q4 embedded: $(p "$E" bench -backend cuda -p 512 -n 128 -r 3 -m /tmp/q4.gguf)"
el done
