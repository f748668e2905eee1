#!/bin/sh
# (After it ran, its variant and bits-test steps were put into gpu-setup.sh's patched
# and bits_tests helpers; the steps are the same.)
# s66-call2.sh: (1) the tests on the committed PTX again (s66-call1 ran them but its
# output was cut to the last 12,000 characters: now kept in $OUT/tests.txt); (2) the
# micro-benchmark on three variants of the latent attention (s66-vN: the newest row's
# bulk copy issued before the query's loads; s66-vQ: the query in registers for the
# scores, whose shared-memory loads s66-call1 suggests bound pass 1; s66-vNQ: both);
# (3) their bits tests and rotated tg128 rounds of V2-Lite against the tree's kernel
# compiled here. Before the call: dev-build.sh (TESTS="cuda deepseek2 archs"), hold
# kernels/cuda/*.ptx, testdata/vocab and testdata/tokenizers out; carry bin/dev.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s66c2}"
wait
el "models ready"
all_tests 'TestAttentionLatentBits|TestFusedAttentionQ8K|TestShortAttention|TestKernelNamesExist|TestEmbeddedKernelsWait|TestLatentAttention|TestMatVecStreamed' >"$L/tests.txt" 2>&1
cat "$L/tests.txt"
sh build/shortattn-gpu.sh build/wip/s66-vN.patch build/wip/s66-vQ.patch build/wip/s66-vNQ.patch >"$L/shortattn.txt" 2>&1
grep -E "^==|slope|n 126|n  13" "$L/shortattn.txt"
ptx_all /tmp/px
for x in N Q NQ; do
	patched $x build/wip/s66-v$x.patch
	bits_tests 0 /tmp/v$x 120
	wait
done 2>&1 | tee "$L/vtests.txt"
sweep 3 v2 "EMBER_CUDA_PTX_DIR=/tmp/px $E" "EMBER_CUDA_PTX_DIR=/tmp/vN $E" "EMBER_CUDA_PTX_DIR=/tmp/vQ $E" "EMBER_CUDA_PTX_DIR=/tmp/vNQ $E" 2>&1 | tee "$L/sweep.txt"
el done
