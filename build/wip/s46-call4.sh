#!/bin/sh
# s46-call4.sh (session 46): why the routed gate/up (mmv_route_q4_k, ~13 us a MoE layer
# in the chain for ~19.5 MB) is slow: ncu's sections for it and for
# mmv_route_q4_k_bulk (all its weights in flight at once: no faster in s46-call3), and
# tg128 with the routing replaced by fixed scattered experts (moe.cu built with
# -DROUTE_FAKE: wrong tokens, the chain's timing without the routing's latency).
set -u
export MODELS=v2
. build/gpu-setup.sh "${OUT:-/tmp/s46c4}"
sh build/ptx-copy.sh /tmp/px && el "ptx done"
rm -rf /tmp/pf && cp -r /tmp/px /tmp/pf && sh build/ptx-one.sh /tmp/pf moe -DROUTE_FAKE && el "fake ptx done"
wait
t() { q env $1 bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/v2.gguf; }
for r in 1 2 3; do el "v2 tg128 fake route / real: $(t "EMBER_CUDA_PTX_DIR=/tmp/pf $E") / $(t "EMBER_CUDA_PTX_DIR=/tmp/px $E")"; done
el "v2 tg128 bulk fake / bulk real: $(t "EMBER_CUDA_ROUTE_BULK=1 EMBER_CUDA_PTX_DIR=/tmp/pf $E") / $(t "EMBER_CUDA_ROUTE_BULK=1 EMBER_CUDA_PTX_DIR=/tmp/px $E")"
export EMBER_CUDA_PTX_DIR=/tmp/px
DETAIL='mmv_route_q4_k$' PACK=1 sh build/profile-cuda.sh $E /tmp/v2.gguf $L/plain -p 0 -n 24 -r 1 2>&1 | grep -E 'step|mmv_route|mmv_id|Duration|Throughput|Stall|stall|Warp Cycles|Occupancy|Eligible|Issued|L2 Hit|DRAM' | head -60
el plain profiled
EMBER_CUDA_ROUTE_BULK=1 DETAIL='mmv_route_q4_k_bulk' PACK=1 sh build/profile-cuda.sh $E /tmp/v2.gguf $L/bulk -p 0 -n 24 -r 1 2>&1 | grep -E 'step|mmv_route|Duration|Throughput|Stall|stall|Warp Cycles|Occupancy|Eligible|Issued|L2 Hit|DRAM' | head -40
el bulk profiled
