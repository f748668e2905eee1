#!/bin/sh
# s46-call6.sh (session 46, the last ~240 s of device time): a first look at
# build/wip/route-router.patch (applied; bin/dev with ember and cuda.test only, the
# committed PTX kept in the tree): moe.ptx made here ($OUT/moe.ptx), TestRouteRouter and
# TestMoERouting on it, then V2-Lite tg128 with EMBER_CUDA_ROUTE_ROUTER=1 / without,
# alternating, and the greedy tokens of both. s47-call1.sh is the full call.
set -u
export MODELS=v2
. build/gpu-setup.sh "${OUT:-/tmp/s46c6}"
sh build/ptx-copy.sh /tmp/px moe && cp /tmp/px/moe.ptx $L/ && el "moe ptx done"
export EMBER_CUDA_PTX_DIR=/tmp/px
(cd inference/backend/cuda && timeout -s KILL 100 "$R/bin/dev/cuda.test" -test.run 'RouteRouter|MoERouting' -test.v 2>&1 | grep -E -- '^(--- |ok|FAIL|PASS)|_test.go' | head -12)
el "tests done"
wait
t() { q env $1 bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/v2.gguf; }
for r in 1 2 3; do el "v2 tg128 router/plain: $(t "EMBER_CUDA_ROUTE_ROUTER=1 $E") / $(t "$E")"; done
el "v2 greedy tokens router/plain: $(env EMBER_CUDA_ROUTE_ROUTER=1 $E run -backend cuda -m /tmp/v2.gguf -n 32 -p Hello 2>/dev/null | md5sum | cut -c1-8) / $($E run -backend cuda -m /tmp/v2.gguf -n 32 -p Hello 2>/dev/null | md5sum | cut -c1-8)"
