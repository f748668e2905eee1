#!/bin/sh
# s41-call8.sh: argmax_f32 reading 16-byte chunks (argmax_block4; session 41's skip
# study: ~20 us an 8B step in argmax_f32, ~31 dependent round trips of four floats a
# thread). Makes sample.ptx ($OUT), runs the argmax, feeder and sampling tests and the
# engine's CUDA tests on it, then 8B Q4_K_M tg128 against the committed sample.ptx
# (embedded in the same binary), alternating. bin/dev: ember, TESTS="cuda engine".
# Written in session 41 when its device time was spent, not run: build/wip/argmax4.patch
# (the kernel) is applied to the copy of the tree first.
set -u
{ patch -p1 -s <build/wip/argmax4.patch || git apply build/wip/argmax4.patch; } || exit 1
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s41c8}"
sh build/ptx-copy.sh /tmp/px sample || el "PTX FAILED"
cp /tmp/px/sample.ptx "$L/"
el "ptx done"
export EMBER_CUDA_PTX_DIR=/tmp/px
sample_tests 75
grep -E -- '--- (PASS|FAIL).*(ArgMax|chunks|floats past)' /tmp/g0.log | head -8
wait
b() { q env $1 $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/q4.gguf; }
OLD="-u EMBER_CUDA_PTX_DIR"
NEW="EMBER_CUDA_PTX_DIR=/tmp/px"
for r in 1 2 3; do
	el "q4 tg128: committed $(b "$OLD") new $(b "$NEW")"
done
