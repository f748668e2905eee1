#!/bin/sh
# s47-call4.sh (session 47): the tree without topk-rank (HEAD's moe.cu) and with the
# dense evict-first products: every module's PTX made here into /tmp/pxh and
# $OUT/ptx.tar.xz; /tmp/px the same with build/wip/moe-topk.cu. Tests on /tmp/pxh
# (routing, names, deepseek2's CUDA tests), then ab 6 rounds: /tmp/pxh / /tmp/px (topk-rank
# alone, with the dense products evict-first on both sides). bin/dev from s47-call3's tree
# (topk-rank.patch touches only moe.cu).
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s47c4}"
ptx_all /tmp/pxh
rm -rf /tmp/px && cp -r /tmp/pxh /tmp/px && cp build/wip/moe-topk.cu /tmp/px/moe.cu && sh build/ptx-one.sh /tmp/px moe && el "topk moe done"
export EMBER_CUDA_PTX_DIR=/tmp/pxh
tgroup 0 'DenseEvict|MoERouting|KernelNamesExist|EmbeddedKernelsWait|TopK|IDW' 90
(cd inference/model/deepseek2 && timeout -s KILL 90 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3 | sed 's/^/deepseek2: /') &
wait
el "tests done"
unset EMBER_CUDA_PTX_DIR
ab 6 v2 "EMBER_CUDA_PTX_DIR=/tmp/pxh $E" "EMBER_CUDA_PTX_DIR=/tmp/px $E"
