#!/bin/sh
# s38-call2.sh: attention_decD_1l2/_1l4 (kernels/cuda/attention_long.cu: one row, or rows
# each its sequence's one new position, over 2,049-8,192 positions on attention_decD_1c's
# cluster, each block's chunk in tiles of 256 through two slots) and dec1c-rows (several
# OneNew rows on attention_decD_1c). attention_one.cuh changed (DEC_ARGS, A1_CL moved
# there): every module's PTX made on the H200 ($OUT/ptx.tar.xz), everything runs on it.
# Tests, then one stream at 3,000 / 5,000 / 8,000 against EMBER_CUDA_NO_DEC1L=1 (split1),
# 2/4/8 streams at 1,500 against EMBER_CUDA_NO_DEC1C=1, 4 streams at 5,000, tg128.
# bin/dev: TESTS="cuda".
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s38c2}"
ptx_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestDec1Cluster' 300
tgroup 1 'TestAttentionChoice|TestSplitAttention|TestFusedAttentionQ8K|TestKernelNamesExist|TestEmbeddedKernelsWait|TestFusedDecoderLayers|TestDecodeAttention' 300
wait
el "tests done"
for r in 1 2; do
	for pl in 3000 5000 8000; do
		el "8B 1 stream p$pl dec1l: $(s "$E" bench -backend cuda -streams 1 -p $pl -n 64 -m /tmp/q4.gguf)"
		el "8B 1 stream p$pl split1: $(s env EMBER_CUDA_NO_DEC1L=1 "$E" bench -backend cuda -streams 1 -p $pl -n 64 -m /tmp/q4.gguf)"
	done
done
for st in 2 4 8; do
	el "8B $st streams p1500 dec1c: $(s "$E" bench -backend cuda -streams $st -p 1500 -n 64 -m /tmp/q4.gguf)"
	el "8B $st streams p1500 split1: $(s env EMBER_CUDA_NO_DEC1C=1 "$E" bench -backend cuda -streams $st -p 1500 -n 64 -m /tmp/q4.gguf)"
done
el "8B 4 streams p5000 dec1l: $(s "$E" bench -backend cuda -streams 4 -p 5000 -n 64 -m /tmp/q4.gguf)"
el "8B 4 streams p5000 split1: $(s env EMBER_CUDA_NO_DEC1L=1 "$E" bench -backend cuda -streams 4 -p 5000 -n 64 -m /tmp/q4.gguf)"
el "8B tg128: $(q "$E" bench -backend cuda -p 0 -n 128 -r 3 -m /tmp/q4.gguf)"
