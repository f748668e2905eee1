#!/bin/sh
# last-gpu.sh: session 26's last ~2 minutes: the carveout for DeepSeek-V2-Lite's Q8_0
# expert products too (mmv_id_q8_0 added to EMBER_CUDA_CARVEOUT_KERNELS) against the
# default, and Q8_0's mat-vecs at 66 against 44, alternating, two rounds.
# Carry bin/dev (build/dev-build.sh).
set -u
MODELS="q8 v2"
. build/gpu-setup.sh /tmp/last-gpu
wait
K=mmv_q8_0,mmv_multi_q8_0
for r in 1 2; do
	echo "v2 tg128 default $(q "$E" bench -backend cuda -m /tmp/v2.gguf -p 0 -n 128 -r 3)"
	echo "v2 tg128 +id_q8_0 $(EMBER_CUDA_CARVEOUT_KERNELS=$K,mmv_id_q8_0 q "$E" bench -backend cuda -m /tmp/v2.gguf -p 0 -n 128 -r 3)"
	echo "q8 tg128 44 $(q "$E" bench -backend cuda -m /tmp/q8.gguf -p 0 -n 128 -r 3)"
	echo "q8 tg128 66 $(EMBER_CUDA_CARVEOUT=66 q "$E" bench -backend cuda -m /tmp/q8.gguf -p 0 -n 128 -r 3)"
done
