#!/bin/sh
# s37-call6.sh: attention_split1 with one query row reads its chunk's older keys and
# values (the first sub-chunk's keys and VPRE value rows a thread) before it waits for
# the kernel before, as the one-row kernel for short caches does. Makes
# attention_split.ptx on the H200 ($OUT/attention_split.ptx); tests on it
# (EMBER_CUDA_PTX_DIR): TestSplit1Bits (against the two-launch kernels), the split,
# fused, conformance and golden tests, the fed decode; then one stream through the
# engine at depth, the new PTX against the committed one, alternating. bin/dev built
# with TESTS="cuda archs".
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s37c6}"
sh build/ptx-copy.sh /tmp/px attention_split || el "PTX FAILED"
cp /tmp/px/attention_split.ptx "$L/attention_split.ptx"
el "ptx made"
(export EMBER_CUDA_PTX_DIR=/tmp/px; tgroup 0 'TestSplit1Bits|TestSplitAttention|TestFusedAttentionQ8K|TestKernelNamesExist|TestFusedDecoderLayers|TestConformance$' 300
(cd inference/model/archs && timeout -s KILL 250 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA|TestFedDecodeCUDA' 2>&1 | tail -3) &
wait)
el "tests done"
for r in 1 2; do
	for pl in 512 2048 8192; do
		el "8B 1 stream p$pl new: $(s env EMBER_CUDA_PTX_DIR=/tmp/px "$E" bench -backend cuda -streams 1 -p $pl -n 64 -m /tmp/q4.gguf)"
		el "8B 1 stream p$pl old: $(s "$E" bench -backend cuda -streams 1 -p $pl -n 64 -m /tmp/q4.gguf)"
	done
done
el "8B 4 streams p2048 new: $(s env EMBER_CUDA_PTX_DIR=/tmp/px "$E" bench -backend cuda -streams 4 -p 2048 -n 64 -m /tmp/q4.gguf)"
el "8B 4 streams p2048 old: $(s "$E" bench -backend cuda -streams 4 -p 2048 -n 64 -m /tmp/q4.gguf)"
EMBER_CUDA_PTX_DIR=/tmp/px EMBER_CUDA_SKIP=attention_split1 timeout -s KILL 100 "$E" bench -backend cuda -streams 1 -p 512 -n 64 -m /tmp/q4.gguf 2>&1 | grep '^| ' | tail -1
