#!/bin/sh
# s40-call1.sh: nucleus draws on the GPU (top-p or min-p without top-k: sample_row.cu's
# sample_nucleus_f32, rounds of candidates from topk_block), with sample.cu split into
# sample.cu, sample_row.cu and sample.cuh (build/wip/sample-split.patch). A new .cuh
# changes every module's hash: every PTX is made here ($OUT/ptx.tar.xz) and every body
# but sample's and sample_row's compared with the committed one. Then the feeder tests
# and the engine's CUDA tests on it, and 8B Q4_K_M streams of 16 + 128 drawn with top-p
# alone against bin/dev/ember-old (e68b158 given the -top-p flag: such rows read to the
# host every token). bin/dev: ember, ember-old, TESTS="cuda engine" (carried without
# testdata/golden, vocab, tokenizers).
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s40c1}"
ptx_all /tmp/px
same_bodies /tmp/px sample sample_row
grep -A3 'sample_nucleus_f32\|topk_f32' /tmp/px/sample*.log 2>/dev/null | head -4
export EMBER_CUDA_PTX_DIR=/tmp/px
sample_tests 200
O=$R/bin/dev/ember-old
b() { s env $1 bench -backend cuda -streams $2 -p 16 -n 128 -m /tmp/q4.gguf $3; }
OLD="-u EMBER_CUDA_PTX_DIR $O"
NEW=$E
for round in 1 2; do
	el "1 stream t1 top-p 0.9: old $(b "$OLD" 1 '-temp 1 -top-p 0.9') new $(b "$NEW" 1 '-temp 1 -top-p 0.9')"
	el "1 stream t0.3 top-p 0.9: old $(b "$OLD" 1 '-temp 0.3 -top-p 0.9') new $(b "$NEW" 1 '-temp 0.3 -top-p 0.9')"
done
el "4 streams t0.3 top-p 0.9: old $(b "$OLD" 4 '-temp 0.3 -top-p 0.9') new $(b "$NEW" 4 '-temp 0.3 -top-p 0.9')"
el "16 streams t0.3 top-p 0.9: old $(b "$OLD" 16 '-temp 0.3 -top-p 0.9') new $(b "$NEW" 16 '-temp 0.3 -top-p 0.9')"
el "1 stream new: greedy $(b "$NEW" 1 '-r 1') temp1 $(b "$NEW" 1 '-temp 1') sample $(b "$NEW" 1 '-sample') old greedy $(b "$OLD" 1 '-r 1')"
