#!/bin/sh
# s37-call8.sh: attention_decD_1c, one row's decode attention over 257-2,048 positions on
# the one-row kernel's code in a cluster of eight blocks a KV head (each a chunk of the
# row, the older keys and values copied before the wait, the softmax statistics and P V
# sums meeting in distributed shared memory). common.cuh and attention_one.cuh changed:
# every module's PTX made on the H200 ($OUT/ptx.tar.xz), and everything runs on it
# (EMBER_CUDA_PTX_DIR): TestDec1Cluster (against attention_split1), the split, fused and
# conformance tests, the goldens, the fed decode; then one stream at depth against
# EMBER_CUDA_NO_DEC1C=1 (attention_split1 there), and tg128. bin/dev: TESTS="cuda archs".
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s37c8}"
ptx_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestDec1Cluster|TestSplitAttention|TestFusedAttentionQ8K|TestKernelNamesExist|TestFusedDecoderLayers|TestPTXMatchesSources' 300
(cd inference/model/archs && timeout -s KILL 250 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA|TestFedDecodeCUDA' 2>&1 | tail -3) &
wait
el "tests done"
for r in 1 2; do
	for pl in 512 1500; do
		el "8B 1 stream p$pl dec1c: $(s "$E" bench -backend cuda -streams 1 -p $pl -n 64 -m /tmp/q4.gguf)"
		el "8B 1 stream p$pl split1: $(s env EMBER_CUDA_NO_DEC1C=1 "$E" bench -backend cuda -streams 1 -p $pl -n 64 -m /tmp/q4.gguf)"
	done
done
el "8B tg128: $(q "$E" bench -backend cuda -p 0 -n 128 -r 3 -m /tmp/q4.gguf)"
