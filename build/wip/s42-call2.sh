#!/bin/sh
# s42-call2.sh: mmv_route_q4_k (moe.cu: a decode token's routing and its Q4_K experts'
# gate and up in one launch) and moe_topk's two-experts-a-lane path (X <= 64). Makes
# moe.ptx ($OUT), runs the routing, id and queue tests and deepseek2's CUDA tests on it,
# then DeepSeek-V2-Lite tg128: fused / moe_topk + mmv_id on the new PTX
# (EMBER_CUDA_NO_ROUTE_FUSE) / the committed PTX (HEAD's moe_topk), alternating; then one
# step under ncu. bin/dev: TESTS="cuda deepseek2"; testdata/golden's deepseek2 files only.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s42c2}"
sh build/ptx-copy.sh /tmp/px moe || el "PTX FAILED"
cp /tmp/px/moe.ptx "$L/"
el "ptx done"
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMoERouting|TestIDWBits|TestMMVQueue|TestConformance' 200
(cd inference/model/deepseek2 && timeout -s KILL 250 "$R/bin/dev/deepseek2.test" -test.v -test.run 'CUDA' 2>&1 | grep -E -- '^(--- |ok|FAIL|PASS)|_test.go:[0-9]+: ' | tail -24) &
wait
grep -E -- '--- (PASS|FAIL)' /tmp/g0.log | head -40
el "tests done"
unset EMBER_CUDA_PTX_DIR
b() { q env $1 $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$2.gguf; }
A="EMBER_CUDA_PTX_DIR=/tmp/px"
B="EMBER_CUDA_PTX_DIR=/tmp/px EMBER_CUDA_NO_ROUTE_FUSE=1"
C="EMBER_CUDA_NO_ROUTE_FUSE=1"
for r in 1 2 3; do
	el "v2 tg128: fused $(b "$A" v2) topk2 $(b "$B" v2) head $(b "$C" v2)"
done
EMBER_CUDA_PTX_DIR=/tmp/px sh build/profile-cuda.sh "$E" /tmp/v2.gguf "$L/v2prof" -p 0 -n 32 >/dev/null 2>&1 || el "profile failed"
head -14 "$L/v2prof/summary.txt"
