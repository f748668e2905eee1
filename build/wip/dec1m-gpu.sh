#!/bin/sh
# dec1m-gpu.sh (written in session 38, not run: no device time was left): the first
# device call for build/wip/dec1m.patch, attention_decD_1mN: attention_long.cu's forms on
# clusters of 16 blocks a KV head (a non-portable size: no __cluster_dims__, the shape
# set on the loaded function with cuFuncSetAttribute, kernel.go), so one row past 2,048
# positions takes 128 blocks for Llama-3.1-8B instead of 64 (session 38: _1l8 at 12,000
# positions 268 against split1's 264; the eight blocks a KV head bound it). Off unless
# EMBER_CUDA_DEC1M is set. Apply the patch (git apply build/wip/dec1m.patch), build with
# TESTS="cuda" sh build/dev-build.sh, carry bin/dev (move testdata/vocab and
# testdata/tokenizers out of the tree for the call if the 64 MiB limit is passed). Makes
# attention_long.ptx here ($OUT; only that module changes), runs TestDec1Cluster (now
# with the _1m forms against split1) and the choice and kernel tests on it, then one
# stream at 3,000-16,000 positions and 4 streams at 5,000, _1m against _1l. If the
# attribute is refused (CUDA_ERROR_NOT_PERMITTED) or fewer than eight clusters of 16 fit
# at once (a GPC may hold fewer than 16 free SMs), _1m will fail or run in two waves.
# RUN in session 39 (call 1): every test passed, and _1m lost to _1l at every length
# (3,000 positions 326 against 399; 12,000 259 against 265): not applied. NOTES.md, Session 39.
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/dec1m}"
sh build/ptx-copy.sh /tmp/px attention_long || el "PTX FAILED"
cp /tmp/px/attention_long.ptx "$L/"
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestDec1Cluster' 330
tgroup 1 'TestAttentionChoice|TestKernelNamesExist|TestEmbeddedKernelsWait|TestFusedDecoderLayers' 200
wait
el "tests done"
b() { s "$@" bench -backend cuda -streams $ST -p $PL -n 64 -m /tmp/q4.gguf; }
ST=1
for PL in 3000 5000 8000 12000 16000; do
	el "8B 1 stream p$PL 1l: $(b "$E") 1m: $(b env EMBER_CUDA_DEC1M=1 "$E")"
done
ST=4 PL=5000
el "8B 4 streams p5000 1l: $(b "$E") 1m: $(b env EMBER_CUDA_DEC1M=1 "$E")"
