#!/bin/sh
# s73-call1.sh (session 73): s72-call2.sh (absorb on by default, committed PTX: CUDA
# goldens, deepseek2's CUDA tests, the backend's latent/absorb/graph tests, V2-Lite tg128
# default against EMBER_CUDA_ABSORB=off, 5 rotated rounds; the 8B twice) and then the
# serving bench (64 streams of 512 + 128) of both models, V2-Lite with absorb on and off.
# Before: sh build/dev-build.sh; hold PTX, vocab, tokenizers out; carry bin/dev.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s73c1}"
tgroup 0 'TestAbsorb|TestKernelNamesExist|TestEmbeddedKernelsWait|TestBranchedGraph|TestGroupsSpacedBits|TestAttentionLatent|TestNormRouter' 240
model_tests 240
wait
cp /tmp/g0.log "$L/g0.log"
el "tests done"
sweep 5 v2 "$E" "EMBER_CUDA_ABSORB=off $E" 2>&1 | tee "$L/sweep-v2.txt"
sweep 2 q4 "$E" "EMBER_CUDA_ABSORB=off $E" 2>&1 | tee "$L/sweep-q4.txt"
el "v2 64 streams absorb on/off: $(s $E bench -backend cuda -streams 64 -p 512 -n 128 -m /tmp/v2.gguf) / $(s env EMBER_CUDA_ABSORB=off $E bench -backend cuda -streams 64 -p 512 -n 128 -m /tmp/v2.gguf)"
el "q4 64 streams: $(s $E bench -backend cuda -streams 64 -p 512 -n 128 -m /tmp/q4.gguf)"
el done
