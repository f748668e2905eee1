#!/bin/sh
# s44-call3.sh (session 44): lands evict-first weight loads for mv1's per-expert and
# per-head products. s44-call1.sh/s44-call2a.sh found the whole gain of
# wevict.patch's EMBER_WEVICT=1 in matmul.cu (V2-Lite tg128 ~603 against ~583, 8B Q4_K_M
# ~518 against ~520); the tree now has mv1.cuh's ldw*<EF> with EF = ID by default
# (EMBER_WEVICT 1: only mmv_id_* and mmv_idw_* change, checked with nvcc 12.4) and
# argmax-reduce.patch applied. Makes every module's PTX ($OUT/ptx.tar.xz), runs the
# backend's tests, the CUDA goldens and deepseek2's CUDA tests on it, and matmul with
# -DEMBER_WEVICT=2 (every mv1 product: the measured ef-matmul) as w2; then tg128 new /
# w2 / main (bin/base), q8, pp512 and 64 streams new against main.
# Carry bin/dev and bin/base, kernels/cuda/*.ptx and testdata/vocab, tokenizers moved out.
set -u
export MODELS="q4 q8 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s44c3}"
base_bin
ptx_tests 'MatMul|MMQ|MMV|MatVec|Products|IDW|F16Cop|SwiGLUQ8|MoERouting|HeadProducts|ArgMax|TopK|SampleAhead|KernelNamesExist|EmbeddedKernelsWait'
rm -rf /tmp/px2 && cp -r /tmp/px /tmp/px2 && sh build/ptx-one.sh /tmp/px2 matmul -DEMBER_WEVICT=2 2>/dev/null && cp /tmp/px2/matmul.ptx "$L/matmul-w2.ptx"
N2="EMBER_CUDA_PTX_DIR=/tmp/px2 $E"
t() { q env $1 bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$2.gguf; }
for r in 1 2; do el "tg128 new/w2/main: q4 $(t "$N" q4) / $(t "$N2" q4) / $(t "$B" q4); v2 $(t "$N" v2) / $(t "$N2" v2) / $(t "$B" v2)"; done
el "v2 tg128 new/main: $(t "$N" v2) / $(t "$B" v2)"
el "q8 tg128 new/main: $(t "$N" q8) / $(t "$B" q8)"
el "q4 pp512 new/main: $(p env $N bench -backend cuda -p 512 -n 0 -r 1 -m /tmp/q4.gguf) / $(p "$B" bench -backend cuda -p 512 -n 0 -r 1 -m /tmp/q4.gguf)"
el "64 streams new/main: v2 $(s env $N bench -backend cuda -streams 64 -p 512 -n 128 -m /tmp/v2.gguf) / $(s "$B" bench -backend cuda -streams 64 -p 512 -n 128 -m /tmp/v2.gguf)"
el "64 streams new/main: q4 $(s env $N bench -backend cuda -streams 64 -p 512 -n 128 -m /tmp/q4.gguf) / $(s "$B" bench -backend cuda -streams 64 -p 512 -n 128 -m /tmp/q4.gguf)"
