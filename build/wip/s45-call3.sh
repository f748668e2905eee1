#!/bin/sh
# s45-call3.sh (session 45): s45-call2 found V2-Lite tg128 622.2 with the fused routing
# (EMBER_CUDA_ROUTE_FUSE=1: mmv_route_q4_k, whose weight loads are now evict-first)
# against ~608-612 without, once. Confirms it alternating, 4 rounds, on the committed
# PTX (bin/dev embeds it), with moe.cu's session-42 variants fused beside it (ROUTE_D=2:
# two tasks ahead; ROUTE_R=2: two rows a task), and 64 streams fused / not once.
# Local: bin/dev from the clean tree (TESTS=cuda), carry bin/dev.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s45c3}"
for v in d2:-DROUTE_D=2 r2:-DROUTE_R=2; do
	rm -rf /tmp/px${v%%:*} && cp -r kernels/cuda /tmp/px${v%%:*} && sh build/ptx-one.sh /tmp/px${v%%:*} moe ${v#*:} 2>/dev/null || el "$v FAILED"
done
wait
el "variants made"
t() { q env $1 bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/v2.gguf; }
F=EMBER_CUDA_ROUTE_FUSE=1
for r in 1 2 3 4; do el "v2 tg128 fused/plain: $(t "$F $E") / $(t "$E")"; done
for r in 1 2; do el "v2 tg128 fused d2/r2: $(t "$F EMBER_CUDA_PTX_DIR=/tmp/pxd2 $E") / $(t "$F EMBER_CUDA_PTX_DIR=/tmp/pxr2 $E")"; done
el "v2 64 streams fused/plain: $(s env $F $E bench -backend cuda -streams 64 -p 512 -n 128 -m /tmp/v2.gguf) / $(s $E bench -backend cuda -streams 64 -p 512 -n 128 -m /tmp/v2.gguf)"
