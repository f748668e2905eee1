#!/bin/sh
# s40-call2.sh: nucleus draws past the first round in rounds of 8,192 (topk_block from a
# boundary, a bitonic sort, the columns kept in a scratch for the draw's walk), after
# call 1 found rounds of 1,024 (each made again for the draw) slower than the host on
# the synthetic model's flat rows. Makes sample_row.ptx ($OUT), runs the feeder tests
# and the engine's CUDA tests on it, then 8B Q4_K_M streams of 16 + 128 with top-p alone
# against bin/dev/ember-old (e68b158 given the -top-p flag). bin/dev: ember, ember-old,
# TESTS="cuda engine" (carried without testdata/golden, vocab, tokenizers).
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s40c2}"
sh build/ptx-copy.sh /tmp/px sample_row || el "PTX FAILED"
cp /tmp/px/sample_row.ptx "$L/"
export EMBER_CUDA_PTX_DIR=/tmp/px
sample_tests 200
O=$R/bin/dev/ember-old
b() { s env $1 bench -backend cuda -streams $2 -p 16 -n 128 -m /tmp/q4.gguf $3; }
OLD="-u EMBER_CUDA_PTX_DIR $O"
NEW=$E
for round in 1 2; do
	el "1 stream t1 top-p 0.9: old $(b "$OLD" 1 '-temp 1 -top-p 0.9') new $(b "$NEW" 1 '-temp 1 -top-p 0.9')"
	el "1 stream t0.3 top-p 0.9: old $(b "$OLD" 1 '-temp 0.3 -top-p 0.9') new $(b "$NEW" 1 '-temp 0.3 -top-p 0.9')"
	el "1 stream t0.1 top-p 0.9: old $(b "$OLD" 1 '-temp 0.1 -top-p 0.9') new $(b "$NEW" 1 '-temp 0.1 -top-p 0.9')"
done
el "4 streams t0.3 top-p 0.9: old $(b "$OLD" 4 '-temp 0.3 -top-p 0.9') new $(b "$NEW" 4 '-temp 0.3 -top-p 0.9')"
el "4 streams t1 top-p 0.9: old $(b "$OLD" 4 '-temp 1 -top-p 0.9') new $(b "$NEW" 4 '-temp 1 -top-p 0.9')"
el "16 streams t0.3 top-p 0.9: old $(b "$OLD" 16 '-temp 0.3 -top-p 0.9') new $(b "$NEW" 16 '-temp 0.3 -top-p 0.9')"
el "1 stream new: greedy $(b "$NEW" 1 '-r 1') temp1 $(b "$NEW" 1 '-temp 1') sample $(b "$NEW" 1 '-sample')"
