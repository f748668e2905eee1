#!/bin/sh
# s67-call2.sh (session 67): s67-vF (the latent attention's products as fused
# multiply-adds: each product of two f16 values is exact in a float, so an FMA rounds
# where the separate add did and the bits stay; ~8 fewer issue slots a chunk in the
# scores, 7 a position in P V) against the tree's kernel: the micro-benchmark with
# output hashes (the same bits print the same hash), the attention bits tests, rotated
# V2-Lite tg128 rounds; then the 8B with its decode attention on attention_short128
# (EMBER_CUDA_SHORT_GQA=1) against attention_dec128_1. Before the call: TESTS=cuda sh
# build/dev-build.sh, hold kernels/cuda/*.ptx, testdata/vocab and testdata/tokenizers
# out; carry bin/dev.
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s67c2}"
ptx_all /tmp/px
patched F build/wip/s67-vF.patch
sh build/shortattn-gpu.sh build/wip/s67-vF.patch >"$L/shortattn.txt" 2>&1
grep -E "^==|slope|n 126|n  13|n   1:|n 250" "$L/shortattn.txt"
el "micro done; hashes that differ between the tree's kernel and vF (of 18): $(awk '/^==/ { s++ } / out [0-9a-f]+$/ { i[s]++; h[s, i[s]] = $NF }
	END { for (j = 1; j <= i[1]; j++) d += h[1, j] != h[2, j]; print d + 0 " (" i[1] " and " i[2] " hashes)" }' "$L/shortattn.txt")"
wait
el "models ready"
bits_tests 2 /tmp/vF >"$L/tests.txt" 2>&1
wait
cat "$L/tests.txt"
sweep 4 v2 "EMBER_CUDA_PTX_DIR=/tmp/px $E" "EMBER_CUDA_PTX_DIR=/tmp/vF $E" >"$L/sweep.txt" 2>&1
cat "$L/sweep.txt"
sweep 4 q4 "$E" "EMBER_CUDA_SHORT_GQA=1 $E" >"$L/sweep8.txt" 2>&1
cat "$L/sweep8.txt"
EMBER_CUDA_SHORT_GQA=1 tgroup 4 'TestShortAttention|TestConformance$' 200 >"$L/gqa-tests.txt" 2>&1
wait
cat "$L/gqa-tests.txt"
el done
