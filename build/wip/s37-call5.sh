#!/bin/sh
# s37-call5.sh: attention_splitc (split decode attention with a (row, KV head)'s eight
# chunks as one cluster: statistics and partial sums in distributed shared memory,
# cluster barriers instead of a counter in global memory). Makes attention_split.ptx on
# the H200 ($OUT/attention_split.ptx) and runs on it (EMBER_CUDA_PTX_DIR): the split,
# fused and conformance tests, the goldens; then one stream through the engine at depth,
# attention_splitc against EMBER_CUDA_NO_SPLITC=1 (attention_split1), alternating.
# bin/dev built with TESTS="cuda archs".
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s37c5}"
sh build/ptx-copy.sh /tmp/px attention_split || el "PTX FAILED"
cp /tmp/px/attention_split.ptx "$L/attention_split.ptx"
export EMBER_CUDA_PTX_DIR=/tmp/px
el "ptx made"
tgroup 0 'TestSplitClusterBits|TestSplitAttention|TestFusedAttentionQ8K|TestKernelNamesExist|TestFusedDecoderLayers|TestAttentionChoice' 300
(cd inference/model/archs && timeout -s KILL 250 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA|TestFedDecodeCUDA' 2>&1 | tail -3) &
wait
el "tests done"
for pl in 512 2048 8192; do
	el "8B 1 stream p$pl splitc: $(s "$E" bench -backend cuda -streams 1 -p $pl -n 64 -m /tmp/q4.gguf)"
	el "8B 1 stream p$pl split1: $(s env EMBER_CUDA_NO_SPLITC=1 "$E" bench -backend cuda -streams 1 -p $pl -n 64 -m /tmp/q4.gguf)"
done
for pl in 512 2048; do
	el "8B 1 stream p$pl splitc: $(s "$E" bench -backend cuda -streams 1 -p $pl -n 64 -m /tmp/q4.gguf)"
	el "8B 1 stream p$pl split1: $(s env EMBER_CUDA_NO_SPLITC=1 "$E" bench -backend cuda -streams 1 -p $pl -n 64 -m /tmp/q4.gguf)"
done
el "8B 4 streams p2048 splitc: $(s "$E" bench -backend cuda -streams 4 -p 2048 -n 64 -m /tmp/q4.gguf)"
el "8B 4 streams p2048 split1: $(s env EMBER_CUDA_NO_SPLITC=1 "$E" bench -backend cuda -streams 4 -p 2048 -n 64 -m /tmp/q4.gguf)"
