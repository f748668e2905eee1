#!/bin/sh
# (After it ran, its repeated steps were put into gpu-setup.sh's variant, phases and
# final helpers; the steps are the same.)
# s65-call4.sh: the landed kernels (attention_short.ptx from s65-call3's D1; Go's default
# now attention_short576w, EMBER_CUDA_SHORT_NARROW the 256-thread form), embedded. Tests:
# the short, latent and fused-Q8K attention tests, the kernel-name and PDL checks,
# TestConformance, the goldens on CUDA, deepseek2's CUDA tests; bench -p 512 -n 128 -r 3
# of V2-Lite and the 8B (the README's figures); rotated tg128 rounds of V2-Lite: the
# default against EMBER_CUDA_SHORT_NARROW. Carry: bin/dev (all four test binaries), the
# tree less kernels/cuda/*.ptx (embedded in the binaries), testdata/vocab and tokenizers.
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s65c4}"
wait
el "models ready"
all_tests 'TestAttentionLatentBits|TestFusedAttentionQ8K|TestShortAttention|TestKernelNamesExist|TestEmbeddedKernelsWait|TestLatentAttention'
final v2 q4
sweep 4 v2 "$E" "EMBER_CUDA_SHORT_NARROW=1 $E"
el done
