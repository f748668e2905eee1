#!/bin/sh
# (After it ran, its variant and bits-test steps were put into gpu-setup.sh's patched
# and bits_tests helpers; the steps are the same.)
# s66-call3.sh: the tree's attention_short.cu (s66-vN landed: the newest row's bulk copy
# before the query's loads; comments tidied) made into PTX here, with every module
# (ptx_all /tmp/px); the tests on it and the README's figures on it; two variants against
# it: s66-vL (the query laid out so that a quarter warp's float4 loads are 128
# contiguous bytes) and s66-vQ2 (the query in registers only in threads with a position
# in the tile): their bits tests, the micro-benchmark, rotated tg128 rounds of V2-Lite
# against the embedded (session 65's) kernel and the tree's. Before the call: hold
# kernels/cuda/*.ptx, testdata/vocab and testdata/tokenizers out; carry bin/dev
# (session start's: the Go side unchanged, its embedded PTX the old kernel).
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s66c3}"
ptx_all /tmp/px
cp /tmp/px/attention_short.ptx "$L/"
for x in L Q2; do patched $x build/wip/s66-v$x.patch; done
wait
el "models ready"
{
	bits_tests 2 /tmp/vL
	bits_tests 3 /tmp/vQ2
	export EMBER_CUDA_PTX_DIR=/tmp/px
	all_tests 'TestAttentionLatentBits|TestFusedAttentionQ8K|TestShortAttention|TestKernelNamesExist|TestEmbeddedKernelsWait|TestLatentAttention'
} >"$L/tests.txt" 2>&1
cat "$L/tests.txt"
export EMBER_CUDA_PTX_DIR=/tmp/px
final v2 q4 2>&1 | tee "$L/final.txt"
unset EMBER_CUDA_PTX_DIR
sweep 3 v2 "$E" "EMBER_CUDA_PTX_DIR=/tmp/px $E" "EMBER_CUDA_PTX_DIR=/tmp/vL $E" 2>&1 | tee "$L/sweep.txt"
sh build/shortattn-gpu.sh build/wip/s66-vL.patch build/wip/s66-vQ2.patch >"$L/shortattn.txt" 2>&1
grep -E "^==|slope|n 126|n  13|n   1:" "$L/shortattn.txt"
el done
