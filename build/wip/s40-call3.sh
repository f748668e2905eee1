#!/bin/sh
# s40-call3.sh: nucleus rounds' collection one atomic a warp (topk_block), the round size
# a launch argument (EMBER_CUDA_NUC_ROUND), and sample.cuh / sample_row.cu's twin
# reductions shared (argmax_warp, block_maxn). sample.cuh changed, so every module's PTX
# is made here ($OUT/ptx.tar.xz) and every body but sample's and sample_row's compared
# with the committed one. Then the feeder and engine CUDA tests on it, and 8B Q4_K_M
# streams of 16 + 128 with top-p 0.9 alone at rounds of 1,024, 2,048 and 8,192 (call 2:
# 8,192, an atomic a candidate). bin/dev: ember, TESTS="cuda engine" (carried without
# testdata/golden, vocab, tokenizers).
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s40c3}"
ptx_all /tmp/px
same_bodies /tmp/px sample sample_row
export EMBER_CUDA_PTX_DIR=/tmp/px
sample_tests 200
b() { s env EMBER_CUDA_NUC_ROUND=$1 $E bench -backend cuda -streams $2 -p 16 -n 128 -m /tmp/q4.gguf $3; }
for round in 1 2; do
	el "1 stream t1 top-p 0.9: 1024 $(b 1024 1 '-temp 1 -top-p 0.9') 2048 $(b 2048 1 '-temp 1 -top-p 0.9') 8192 $(b 8192 1 '-temp 1 -top-p 0.9')"
	el "1 stream t0.3 top-p 0.9: 1024 $(b 1024 1 '-temp 0.3 -top-p 0.9') 2048 $(b 2048 1 '-temp 0.3 -top-p 0.9') 8192 $(b 8192 1 '-temp 0.3 -top-p 0.9')"
	el "1 stream t0.5 top-p 0.9: 1024 $(b 1024 1 '-temp 0.5 -top-p 0.9') 2048 $(b 2048 1 '-temp 0.5 -top-p 0.9') 8192 $(b 8192 1 '-temp 0.5 -top-p 0.9')"
done
el "4 streams t1 top-p 0.9: 1024 $(b 1024 4 '-temp 1 -top-p 0.9') 8192 $(b 8192 4 '-temp 1 -top-p 0.9')"
el "1 stream: greedy $(b 8192 1 '-r 1') temp1 $(b 8192 1 '-temp 1') sample $(b 8192 1 '-sample') sample+pen $(b 8192 1 '-sample -penalty 1.1')"
