#!/bin/sh
# s38-call4.sh: attention_long.cu on 16 warps a block (call 3's ncu: the 4-warp form
# issued an instruction in ~7.5 cycles, one warp a scheduler), forms _1l1/_1l2/_1l4/_1l8
# (one row up to 16,384 positions). Only attention_long.cu changed since call 3, whose
# PTX is committed: its PTX made here ($OUT/attention_long.ptx). TestDec1Cluster (_1l1
# too) and the attention tests, then one stream at depth against EMBER_CUDA_NO_DEC1L=1
# (split1) and _1l1 against _1c (EMBER_CUDA_DEC1L1=1), 4 streams at 5,000, tg128.
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s38c4}"
sh build/ptx-copy.sh /tmp/px attention_long || el "PTX FAILED"
cp /tmp/px/attention_long.ptx "$L/"
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestDec1Cluster' 330
tgroup 1 'TestAttentionChoice|TestSplitAttention|TestFusedAttentionQ8K|TestKernelNamesExist|TestEmbeddedKernelsWait|TestFusedDecoderLayers|TestDecodeAttention' 300
wait
el "tests done"
b() { s "$@" bench -backend cuda -streams $ST -p $PL -n 64 -m /tmp/q4.gguf; }
for r in 1 2; do
	ST=1
	for PL in 3000 5000 8000 12000; do
		el "8B 1 stream p$PL dec1l: $(b "$E") split1: $(b env EMBER_CUDA_NO_DEC1L=1 "$E")"
	done
	PL=1500
	el "8B 1 stream p1500 1c: $(b "$E") 1l1: $(b env EMBER_CUDA_DEC1L1=1 "$E")"
done
ST=4 PL=5000
el "8B 4 streams p5000 dec1l: $(b "$E") split1: $(b env EMBER_CUDA_NO_DEC1L=1 "$E")"
ST=4 PL=1500
el "8B 4 streams p1500 1c: $(b "$E") 1l1: $(b env EMBER_CUDA_DEC1L1=1 "$E")"
el "8B tg128: $(q "$E" bench -backend cuda -p 0 -n 128 -r 3 -m /tmp/q4.gguf)"
