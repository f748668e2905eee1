#!/bin/sh
# s37-call7.sh: how many blocks attention_split1 should spread one row over. The split
# aims at two blocks an SM (264 on the H200: 33 splits of 8 KV heads); without the
# attention one stream at 512 positions reads 533 tok/s against 389 with it (call 6).
# EMBER_CUDA_SPLIT_SMS (an experiment's switch) sets the SMs it aims to fill: 4, 8, 16,
# 32, 64 and 132 (2, 4, 8, 16, 32 and 33 splits), at 512, 2,048 and 8,192 positions.
# Committed PTX; bin/dev built with TESTS=" ".
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s37c7}"
wait
for pl in 512 2048 8192; do
	for sm in 4 8 16 32 64 132; do
		el "8B 1 stream p$pl sms $sm: $(s env EMBER_CUDA_SPLIT_SMS=$sm "$E" bench -backend cuda -streams 1 -p $pl -n 64 -m /tmp/q4.gguf)"
	done
done
