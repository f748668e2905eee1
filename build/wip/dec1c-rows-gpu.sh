#!/bin/sh
# dec1c-rows-gpu.sh (written in session 37, not run: no device time was left): the first
# device call for build/wip/dec1c-rows.patch, attention_decD_1c for several rows that
# are each their sequence's one new position (Attention.OneNew, set by model.Inputs when
# no sequence repeats). Apply the patch (git apply build/wip/dec1c-rows.patch), build
# with TESTS="cuda archs" sh build/dev-build.sh, carry bin/dev. Makes attention_dec.ptx
# on the H200 ($OUT/attention_dec.ptx; only attention_dec.cu changes, so no other
# module's hash), runs TestDec1Cluster (now three rows at odd contexts),
# TestAttentionChoice*, TestSplitAttention, TestFusedAttentionQ8K, the goldens and the
# fed decode on it, then 2 and 4 streams at 2,048 positions against
# EMBER_CUDA_NO_DEC1C=1 (attention_split1: 611 for 4 streams in session 37's call 6).
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/dec1crows}"
sh build/ptx-copy.sh /tmp/px attention_dec || el "PTX FAILED"
cp /tmp/px/attention_dec.ptx "$L/attention_dec.ptx"
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestDec1Cluster|TestAttentionChoice|TestSplitAttention|TestFusedAttentionQ8K|TestKernelNamesExist|TestFusedDecoderLayers' 300
[ -x "$R/bin/dev/archs.test" ] && (cd inference/model/archs && timeout -s KILL 250 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA|TestFedDecodeCUDA' 2>&1 | tail -3) &
wait
for st in 2 4 8; do
	el "8B $st streams p2048 dec1c: $(s "$E" bench -backend cuda -streams $st -p 2048 -n 64 -m /tmp/q4.gguf)"
	el "8B $st streams p2048 split1: $(s env EMBER_CUDA_NO_DEC1C=1 "$E" bench -backend cuda -streams $st -p 2048 -n 64 -m /tmp/q4.gguf)"
done
el "8B 1 stream p512: $(s "$E" bench -backend cuda -streams 1 -p 512 -n 64 -m /tmp/q4.gguf)"
el "8B 1 stream p8192: $(s "$E" bench -backend cuda -streams 1 -p 8192 -n 64 -m /tmp/q4.gguf)"
el "8B tg128: $(q "$E" bench -backend cuda -p 0 -n 128 -r 3 -m /tmp/q4.gguf)"
