#!/bin/sh
# s46-call5.sh (session 46): mmv_route_q4_k with its routing's code warmed before the
# wait (ROUTE_WARM: warp 0 runs one copy of moe_route on zeros before griddepcontrol.wait,
# then on the logits). s46-call4's ROUTE_FAKE said the routing after the wait costs ~3.9
# us a MoE layer, and session 43 that cold code costs ~6 ns an instruction there. Every
# module's PTX made here ($OUT/ptx.tar.xz); MoE/routing tests, conformance, goldens and
# deepseek2's CUDA tests on it; V2-Lite tg128 warm / committed (bin/dev's embedded PTX)
# alternating 5 rounds; the 8B once; greedy tokens of both.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s46c5}"
ptx_tests 'MoERouting|MMVQueuePaired|KernelNamesExist|EmbeddedKernelsWait|Widen'
t() { q env $1 bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$2.gguf; }
for r in 1 2 3 4 5; do el "v2 tg128 warm/committed: $(t "$N" v2) / $(t "$E" v2)"; done
el "q4 tg128 warm/committed: $(t "$N" q4) / $(t "$E" q4)"
el "v2 greedy tokens warm/committed: $(env EMBER_CUDA_PTX_DIR=/tmp/px $E run -backend cuda -m /tmp/v2.gguf -n 32 -p Hello 2>/dev/null | md5sum | cut -c1-8) / $($E run -backend cuda -m /tmp/v2.gguf -n 32 -p Hello 2>/dev/null | md5sum | cut -c1-8)"
