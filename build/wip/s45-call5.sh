#!/bin/sh
# s45-call5.sh (session 45): session 43's topk-rank.patch (moe_route ranks its experts
# by counting, loops rolled; the same bits) was even against moe_topk's rounds of warp
# argmax when routing was its own launch. moe_route now also runs inside
# mmv_route_q4_k (on by default), where every block waits for warp 0's routing: does
# ranking pay there? The tree has the patch applied (moe.cu only); makes moe's PTX beside
# the committed others in /tmp/pr, runs TestMoERouting and deepseek2's CUDA tests on it,
# then V2-Lite tg128 ranked / committed, alternating, 3 rounds.
# Local: bin/dev (TESTS="cuda deepseek2") from the clean tree, testdata/vocab and
# tokenizers moved out, then git apply build/wip/topk-rank.patch; carry bin/dev.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s45c5}"
sh build/ptx-copy.sh /tmp/pr moe || el "moe FAILED"
el "ptx done"
export EMBER_CUDA_PTX_DIR=/tmp/pr
tgroup 0 'MoERouting' 150
(cd inference/model/deepseek2 && timeout -s KILL 150 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3 | sed 's/^/deepseek2: /') &
wait
unset EMBER_CUDA_PTX_DIR
el "tests done"
t() { q env $1 bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/v2.gguf; }
for r in 1 2 3; do el "v2 tg128 ranked/committed: $(t "EMBER_CUDA_PTX_DIR=/tmp/pr $E") / $(t "$E")"; done
