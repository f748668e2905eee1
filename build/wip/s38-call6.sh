#!/bin/sh
# s38-call6.sh: dec1_attend and dec1_long share their statistics' meeting, the cluster's
# sum and the output's rounding (attention_one.cuh's dec1_stats, dec1_cluster_stats,
# dec1_cluster_sum, dec1_round; the same operations in the same order), so every
# module's PTX is made again ($OUT/ptx.tar.xz); the attention tests, the CUDA goldens and
# the fed decode on it; one stream at 1,500 and 8,000 and tg128 against call 5's
# figures. bin/dev: TESTS="cuda archs" (without testdata/vocab, testdata/tokenizers).
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s38c6}"
ptx_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestDec1Cluster|TestAttentionChoice|TestKernelNamesExist|TestEmbeddedKernelsWait|TestFusedDecoderLayers|TestFusedAttentionQ8K' 200
(cd inference/model/archs && timeout -s KILL 200 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA|TestFedDecodeCUDA' 2>&1 | tail -2) &
wait
el "tests done"
for PL in 1500 8000; do el "8B 1 stream p$PL: $(s "$E" bench -backend cuda -streams 1 -p $PL -n 64 -m /tmp/q4.gguf)"; done
el "8B tg128: $(q "$E" bench -backend cuda -p 0 -n 128 -r 3 -m /tmp/q4.gguf)"
