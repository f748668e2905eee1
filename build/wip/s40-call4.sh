#!/bin/sh
# s40-call4.sh: nucleus rounds that grow: the round after topk_f32's takes
# EMBER_CUDA_NUC_FIRST candidates (default 2,048), each later one four times as many, up
# to EMBER_CUDA_NUC_ROUND (8,192). Call 3 found 2,048 best at temperature 0.3 (one
# round holds the nucleus) and 8,192 at 0.5 and 1 (fewer passes over the row). Makes
# sample_row.ptx ($OUT; every other module is call 3's, committed), runs the feeder and
# engine CUDA tests on it, then 8B Q4_K_M streams of 16 + 128 with top-p 0.9 alone at
# first rounds of 1,024, 2,048 and 8,192. bin/dev: ember, TESTS="cuda engine".
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s40c4}"
sh build/ptx-copy.sh /tmp/px sample_row || el "PTX FAILED"
cp /tmp/px/sample_row.ptx "$L/"
export EMBER_CUDA_PTX_DIR=/tmp/px
sample_tests 200
b() { s env EMBER_CUDA_NUC_FIRST=$1 $E bench -backend cuda -streams $2 -p 16 -n 128 -m /tmp/q4.gguf $3; }
for round in 1 2; do
	for t in 1 0.3 0.5; do
		el "1 stream t$t top-p 0.9: first 1024 $(b 1024 1 "-temp $t -top-p 0.9") 2048 $(b 2048 1 "-temp $t -top-p 0.9") 8192 $(b 8192 1 "-temp $t -top-p 0.9")"
	done
done
el "4 streams t0.5 top-p 0.9: 2048 $(b 2048 4 '-temp 0.5 -top-p 0.9') 8192 $(b 8192 4 '-temp 0.5 -top-p 0.9')"
el "16 streams t0.3 top-p 0.9: 2048 $(b 2048 16 '-temp 0.3 -top-p 0.9') 8192 $(b 8192 16 '-temp 0.3 -top-p 0.9')"
el "1 stream: greedy $(b 2048 1 '-r 1') temp1 $(b 2048 1 '-temp 1') sample $(b 2048 1 '-sample')"
