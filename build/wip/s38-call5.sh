#!/bin/sh
# s38-call5.sh: the session's last call. attention_long.cu's PTX made again (AL_W now
# under #ifndef) and an AL_W=8 variant (/tmp/pw8, EMBER_CUDA_DEC1L_THREADS=256); the
# attention tests, the CUDA goldens and the fed decode on the final PTX; one stream at
# 3,000 and 8,000 positions on 16 warps against 8; the closing figures (8B tg128 and one
# stream at 512 / 2,048 / 8,000, V2-Lite tg128). bin/dev: TESTS="cuda archs" (the device
# tree without testdata/vocab and testdata/tokenizers, for the 64 MiB limit).
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s38c5}"
sh build/ptx-copy.sh /tmp/px attention_long || el "PTX FAILED"
cp /tmp/px/attention_long.ptx "$L/"
rm -rf /tmp/pw8 && cp -r /tmp/px /tmp/pw8 && sh build/ptx-one.sh /tmp/pw8 attention_long -DAL_W=8 && cp /tmp/pw8/attention_long.ptx "$L/attention_long_w8.ptx"
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestDec1Cluster|TestAttentionChoice|TestKernelNamesExist|TestEmbeddedKernelsWait|TestFusedDecoderLayers|TestFeeder|TestSampleAhead' 300
(cd inference/model/archs && timeout -s KILL 280 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA|TestFedDecodeCUDA' 2>&1 | tail -3) &
wait
el "tests done"
b() { s "$@" bench -backend cuda -streams 1 -p $PL -n 64 -m /tmp/q4.gguf; }
for PL in 3000 8000; do
	el "8B 1 stream p$PL w16: $(b "$E") w8: $(b env EMBER_CUDA_PTX_DIR=/tmp/pw8 EMBER_CUDA_DEC1L_THREADS=256 "$E") w16: $(b "$E")"
done
for PL in 512 2048; do el "8B 1 stream p$PL: $(b "$E")"; done
el "8B tg128: $(q "$E" bench -backend cuda -p 0 -n 128 -r 3 -m /tmp/q4.gguf)"
el "V2 tg128: $(q "$E" bench -backend cuda -p 0 -n 128 -r 3 -m /tmp/v2.gguf)"
