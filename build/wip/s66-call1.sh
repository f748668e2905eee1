#!/bin/sh
# s66-call1.sh (written in session 65 for the next device session, not yet run): (1) the
# tests on the committed PTX, s65-call6's (every module made again after mbar.cuh;
# attention_short's body differs from the tested s65-call3 one by a mov of 1 and register
# numbers: same SASS with nvcc 12.4) and the README's figures on it; (2) the latent
# attention alone (NOTES session 65, next step 2): build/shortattn-gpu.sh with the
# sa-stop patches (each phase's time alone, by position; ~2-3 minutes).
# Before the call: TESTS="cuda deepseek2 archs" sh build/dev-build.sh, then hold
# kernels/cuda/*.ptx (embedded in the binaries; the micro-benchmark needs only the .cu
# and .cuh), testdata/vocab and testdata/tokenizers out of the carry; carry bin/dev.
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s66c1}"
wait
el "models ready"
all_tests 'TestAttentionLatentBits|TestFusedAttentionQ8K|TestShortAttention|TestKernelNamesExist|TestEmbeddedKernelsWait|TestLatentAttention|TestMatVecStreamed'
final v2 q4
sh build/shortattn-gpu.sh build/wip/sa-stop1.patch build/wip/sa-stop2.patch build/wip/sa-stop3.patch 2>&1 | tee "$L/shortattn.txt"
el done
