#!/bin/sh
# s43-call5.sh: moe_topk's routing with fewer serial steps (moe.cu): the softmax sum's
# loop over float4 loads (lane 0's double sum in index order, zeros past X: the same
# sum), and
# the k best found by ranks (each lane counts the experts before its own in the order
# descending score, lower index first) in place of k rounds of a warp argmax, for at most
# 64 experts without NaN scores; the weights' division and scale by k lanes. moe.ptx is
# made here ($OUT/moe.ptx); TestMoERouting, deepseek2's CUDA tests and its CUDA goldens
# on it; then V2-Lite tg128 against the committed moe.ptx (bin/dev's embedded PTX),
# alternating. bin/dev: TESTS="cuda archs deepseek2" sh build/dev-build.sh. Run twice in
# session 43: the loops fully unrolled (lost 5.5%), then build/wip/topk-rank.patch (even).
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s43c5}"
sh build/ptx-copy.sh /tmp/px moe || el "PTX FAILED"
cp /tmp/px/moe.ptx "$L/"
el "ptx done"
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMoERouting|TestKernelNamesExist|TestEmbeddedKernelsWait' 200
(cd inference/model/archs && timeout -s KILL 200 "$R/bin/dev/archs.test" -test.v -test.run 'TestGoldensCUDA$/deepseek2' 2>&1 | grep -E -- '^(--- |ok|FAIL|PASS)|^    --- ' | tail -8 | sed 's/^/goldens: /') &
(cd inference/model/deepseek2 && timeout -s KILL 200 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3 | sed 's/^/deepseek2: /') &
wait
el "tests done"
unset EMBER_CUDA_PTX_DIR
t() { q env $1 $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/v2.gguf; }
for r in 1 2 3; do el "v2 tg128: new $(t EMBER_CUDA_PTX_DIR=/tmp/px) committed $(t X=1)"; done
