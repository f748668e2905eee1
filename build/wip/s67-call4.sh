#!/bin/sh
# s67-call4.sh (session 67): the tests s67-call3's 300 s limit cut off (TestFusedAttentionQ8K,
# the kernel-name and PDL tests) on the PTX it made, now embedded, and the latent
# attention's micro-benchmark on the tidied source: its output hashes must be those of
# s67-call2 (build/wip/s67-call2/shortattn.txt; the tree's then and vF's alike). Before
# the call: TESTS=cuda sh build/dev-build.sh; hold out kernels/cuda/*.ptx, testdata/vocab
# and testdata/tokenizers; carry bin/dev.
set -u
export MODELS="none"
. build/gpu-setup.sh "${OUT:-/tmp/s67c4}"
tgroup 0 'TestFusedAttentionQ8K|TestKernelNamesExist|TestEmbeddedKernelsWait' 400
sleep 100 # the tests first (the micro's timings are not the point; its hashes are)
sh build/shortattn-gpu.sh >"$L/shortattn.txt" 2>&1
wait
grep -E "^==|slope|n 126|n  13|n   1:" "$L/shortattn.txt"
got=$(grep -o 'out [0-9a-f]*' "$L/shortattn.txt" | awk '{print $2}' | tr '\n' ' ')
want=$(grep -o 'out [0-9a-f]*' build/wip/s67-call2/shortattn.txt | head -18 | awk '{print $2}' | tr '\n' ' ')
[ "$got" = "$want" ] && el "hashes: all 18 the same as s67-call2's" || el "hashes DIFFER: got $got want $want"
el done
