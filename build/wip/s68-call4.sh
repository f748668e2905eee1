#!/bin/sh
# s68-call4.sh: ffn.cu with swiglu_q8_k's row left unwritten where it is the input row's
# scratch (s68-call3's TestFFNFused failure: the blocks staged xq while rank-0 blocks
# wrote that memory), made here; TestFFN on it, then 8B Q4_K_M tg128 with
# EMBER_CUDA_NO_FFN=1 (the chain) against ffn, rotated. Before the call: TESTS=cuda sh
# build/dev-build.sh, s68-call3's ptx.tar.xz as bin/dev/ptx.txz (every other module's PTX, the committed
# bytes) into bin/dev, hold kernels/cuda/*.ptx and testdata/vocab, testdata/tokenizers
# out; carry bin/dev.
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s68c4}"
sh build/ptx-copy.sh /tmp/px ffn || el "PTX FAILED"
tar xJf bin/dev/ptx.txz -C /tmp/px --exclude=ffn.ptx
cp /tmp/px/ffn.ptx "$L/"
el "ptx: $(ls /tmp/px/*.ptx | wc -l) modules"
export EMBER_CUDA_PTX_DIR=/tmp/px
(cd inference/backend/cuda && timeout -s KILL 90 "$R/bin/dev/cuda.test" -test.v -test.run 'TestFFN' 2>&1 | tail -12)
wait
el "model ready"
sweep 4 q4 "EMBER_CUDA_NO_FFN=1 $E" "$E" 2>&1 | tee "$L/sweep-q4.txt"
unset EMBER_CUDA_PTX_DIR
el done
