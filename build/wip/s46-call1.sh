#!/bin/sh
# s46-call1.sh (written in session 45): lands build/wip/topk-rank.patch if it gains
# again. Session 43 measured it even (598.9 / 592.5 / 596.0 against 597.4 / 597.8 /
# 590.3) when routing was its own launch (moe_topk); session 45 made the routing part of
# mmv_route_q4_k (every block waits for warp 0's moe_route), and s45-call5.sh measured
# the patch there at 622.4 / 616.5 / 622.6 against 616.8 / 608.5 / 619.7 (+0.9%, its
# TestMoERouting and deepseek2's CUDA tests passing), but did not bring its PTX back.
# The tree has the patch applied, and sample-comment.patch (s46-prep.sh 1); every
# module's PTX is made ($OUT/ptx.tar.xz; only moe.ptx's body should differ from the
# committed files, nvcc 12.4 says moe_topk and mmv_route_q4_k change; same_bodies says
# so of the rest, sample.ptx's included), the backend's MoE, routing and product tests,
# conformance, the CUDA goldens and deepseek2's CUDA tests run on it; then V2-Lite tg128
# ranked / committed (bin/dev's embedded PTX) alternating 4 rounds, the same with the
# routing as its own launch (EMBER_CUDA_ROUTE_FUSE=0) once, mmv_route_q4_k at 1, 2 and
# 4 blocks an SM (EMBER_CUDA_ROUTE_BLOCKS, runtime only), 64 streams, and the 8B once.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s46c1}"
ptx_tests 'MoERouting|MMVQueuePaired|MatVec|IDW|HeadProducts|Widen|KernelNamesExist|EmbeddedKernelsWait'
same_bodies /tmp/px moe
t() { q env $1 bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$2.gguf; }
for r in 1 2 3 4; do el "v2 tg128 ranked/committed: $(t "$N" v2) / $(t "$E" v2)"; done
el "v2 tg128 two launches ranked/committed: $(t "EMBER_CUDA_ROUTE_FUSE=0 $N" v2) / $(t "EMBER_CUDA_ROUTE_FUSE=0 $E" v2)"
for b in 1 2 4; do el "v2 tg128 ranked, $b route blocks an SM: $(t "EMBER_CUDA_ROUTE_BLOCKS=$b $N" v2)"; done
el "q4 tg128 ranked/committed: $(t "$N" q4) / $(t "$E" q4)"
el "v2 64 streams ranked/committed: $(s env $N bench -backend cuda -streams 64 -p 512 -n 128 -m /tmp/v2.gguf) / $(s $E bench -backend cuda -streams 64 -p 512 -n 128 -m /tmp/v2.gguf)"
# Load times with pack.go's widening on all cores (session 45; no figure from the GPU
# machine before it): the models are in the page cache.
for m in v2 q4; do el "$m load: $($E bench -backend cuda -p 0 -n 1 -r 1 -m /tmp/$m.gguf 2>&1 | grep '^load' | cut -d';' -f1), unwidened: $(EMBER_CUDA_WIDEN=0 $E bench -backend cuda -p 0 -n 1 -r 1 -m /tmp/$m.gguf 2>&1 | grep '^load' | cut -d';' -f1)"; done
