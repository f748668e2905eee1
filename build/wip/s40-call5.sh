#!/bin/sh
# s40-call5.sh: the nucleus walks on one thread load eight weights ahead of their
# additions (the same operations in the same order: the chain is the additions alone).
# Makes sample_row.ptx ($OUT), runs the feeder and engine CUDA tests on it, then 8B
# Q4_K_M streams of 16 + 128 with top-p 0.9 alone against the committed sample_row.ptx
# (call 4's, embedded in the same binary). bin/dev: ember, TESTS="cuda engine".
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s40c5}"
sh build/ptx-copy.sh /tmp/px sample_row || el "PTX FAILED"
cp /tmp/px/sample_row.ptx "$L/"
export EMBER_CUDA_PTX_DIR=/tmp/px
sample_tests 200
b() { s env $1 $E bench -backend cuda -streams $2 -p 16 -n 128 -m /tmp/q4.gguf $3; }
OLD="-u EMBER_CUDA_PTX_DIR"
NEW="EMBER_CUDA_PTX_DIR=/tmp/px"
for round in 1 2; do
	for t in 1 0.5 0.3; do
		el "1 stream t$t top-p 0.9: committed $(b "$OLD" 1 "-temp $t -top-p 0.9") new $(b "$NEW" 1 "-temp $t -top-p 0.9")"
	done
done
el "4 streams t1 top-p 0.9: committed $(b "$OLD" 4 '-temp 1 -top-p 0.9') new $(b "$NEW" 4 '-temp 1 -top-p 0.9')"
