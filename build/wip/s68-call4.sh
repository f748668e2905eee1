#!/bin/sh
# s68-call4.sh: ffn on the embedded PTX (s68-call3's ffn.ptx: ffn.cu is that source
# again, and the host now gives swiglu_q8_k's row its own scratch where it would be the
# input row's: s68-call3's TestFFNFused failure, the blocks staged xq while rank-0
# blocks wrote that memory); TestFFN, then 8B Q4_K_M tg128 with EMBER_CUDA_NO_FFN=1
# (the chain) against ffn, rotated. Before the call: TESTS=cuda sh build/dev-build.sh,
# hold kernels/cuda/*.ptx and testdata/vocab, testdata/tokenizers out; carry bin/dev.
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s68c4}"
(cd inference/backend/cuda && timeout -s KILL 90 "$R/bin/dev/cuda.test" -test.v -test.run 'TestFFN' 2>&1 | tail -12)
wait
el "model ready"
sweep 4 q4 "EMBER_CUDA_NO_FFN=1 $E" "$E" 2>&1 | tee "$L/sweep-q4.txt"
el done
