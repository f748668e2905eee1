#!/bin/sh
# (After it ran, its repeated steps were put into gpu-setup.sh's variant, phases and
# final helpers; the steps are the same.)
# (Kept as the record. Its sources s65-vP1.cu, s65-vP3.cu, s65-phD1.cu, s65-phP1.cu and
# s65-phP3.cu are now patches of the same names (.patch) against the landed kernel.)
# s65-call5.sh: does the next kernel's early launch slow the latent attention? The
# landed kernel (D1) lets the next kernel launch as soon as it passes its wait
# (pdl_wait); P1 (build/wip/s65-vP1.cu) only after its scoring pass, P3 (s65-vP3.cu) only
# after P V (attention_short576w alone). Tests (bits, PDL) on both; phases of D1, P1 and
# P3 (s65-phD1.cu, s65-phP1.cu, s65-phP3.cu: the stamps of s65-call1-phases.patch); rotated
# tg128 rounds of V2-Lite: the embedded PTX (D1), P1, P3.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s65c5}"
for v in vP1 vP3 phD1 phP1 phP3; do variant /tmp/$v build/wip/s65-$v.cu & done
wait
cp /tmp/vP1/attention_short.ptx "$L/vP1-attention_short.ptx" && cp /tmp/vP3/attention_short.ptx "$L/vP3-attention_short.ptx"
el "model and PTX ready"
for v in P1 P3; do
	export EMBER_CUDA_PTX_DIR=/tmp/v$v
	tgroup $v 'TestAttentionLatentBits|TestFusedAttentionQ8K|TestShortAttention|TestEmbeddedKernelsWait' 150
done
wait
unset EMBER_CUDA_PTX_DIR
el "tests done"
for v in D1 P1 P3; do phases ph$v.log /tmp/ph$v; done
sweep 5 v2 "$E" "EMBER_CUDA_PTX_DIR=/tmp/vP1 $E" "EMBER_CUDA_PTX_DIR=/tmp/vP3 $E"
el done
