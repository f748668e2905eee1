#!/bin/sh
# dec-stages-gpu.sh: attention_dec's ring depth and blocks an SM at 64 streams
# (EMBER_CUDA_DEC_STAGES, EMBER_CUDA_DEC_BLOCKS) against the defaults (four blocks an SM,
# rings of two), two rounds, then tg128. Session 31: the defaults stay best (NOTES).
# Carry bin/dev (build/dev-build.sh).
export MODELS=q4
. build/gpu-setup.sh $OUT
wait
S="$E bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128"
for r in 1 2; do
  echo "r$r default $(s $S) | stages3 $(EMBER_CUDA_DEC_STAGES=3 s $S) | blocks3 $(EMBER_CUDA_DEC_BLOCKS=3 s $S) | blocks2 $(EMBER_CUDA_DEC_BLOCKS=2 s $S) | stages4 $(EMBER_CUDA_DEC_STAGES=4 s $S)"
done
echo "tg128 $(q $E bench -m /tmp/q4.gguf -backend cuda -p 0 -n 128 -r 3)"
