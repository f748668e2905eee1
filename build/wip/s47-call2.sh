#!/bin/sh
# s47-call2.sh (session 47): topk-rank alone and evict-first dense mat-vecs, each on one
# binary (bin/dev from HEAD, s45-prep.sh 1) so only the PTX differs between sides.
# /tmp/pxh: every module made here from HEAD's sources (compared with the committed PTX
# here, from $OUT/ptx.tar.xz);
# /tmp/pxt: the same with build/wip/moe-topk.cu (HEAD's moe.cu with topk-rank.patch);
# /tmp/pxw: the same with matmul built -DEMBER_WEVICT=2 (every mv1 product evict-first).
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s47c2}"
sh build/ptx-copy.sh /tmp/pxh || el "PTX FAILED"
rm -rf /tmp/pxt /tmp/pxw && cp -r /tmp/pxh /tmp/pxt && cp -r /tmp/pxh /tmp/pxw
cp build/wip/moe-topk.cu /tmp/pxt/moe.cu && sh build/ptx-one.sh /tmp/pxt moe && cp /tmp/pxt/moe.ptx "$L/moe-topk.ptx"
sh build/ptx-one.sh /tmp/pxw matmul -DEMBER_WEVICT=2
(cd /tmp/pxh && tar cJf "$L/ptx.tar.xz" *.ptx)
el "ptx done"
export EMBER_CUDA_PTX_DIR=/tmp/pxt
tgroup 0 'MoERouting|MMVQueuePaired|KernelNamesExist|EmbeddedKernelsWait|MatVec|IDW' 240
tgroup 1 'Conformance' 240
model_tests 240
wait
el "tests done"
unset EMBER_CUDA_PTX_DIR
E=$R/bin/dev/ember
ab 10 v2 "EMBER_CUDA_PTX_DIR=/tmp/pxh $E" "EMBER_CUDA_PTX_DIR=/tmp/pxt $E"
ab 6 v2 "EMBER_CUDA_PTX_DIR=/tmp/pxh $E" "EMBER_CUDA_PTX_DIR=/tmp/pxw $E"
for r in 1 2; do
el "q4 tg128 head/topk/wev2: $(q env EMBER_CUDA_PTX_DIR=/tmp/pxh $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/q4.gguf) / $(q env EMBER_CUDA_PTX_DIR=/tmp/pxt $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/q4.gguf) / $(q env EMBER_CUDA_PTX_DIR=/tmp/pxw $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/q4.gguf)"
done
