#!/bin/sh
# sample-split-gpu.sh (written in session 39, not run: no device time left): the device
# call for build/wip/sample-split.patch, which splits kernels/cuda/sample.cu (587 lines)
# into sample.cu (argmax, top-k, draws from the top k), sample_row.cu (penalties,
# whole-row draws; a new module) and sample.cuh (what both share). A new .cuh changes
# every module's source hash, so every PTX is made again; this checks that every
# module's body but sample's and sample_row's is byte for byte the committed one, and
# runs the sampling tests on the new PTX. Before the call: git apply
# build/wip/sample-split.patch; TESTS="cuda engine" sh build/dev-build.sh (stale-PTX
# warning expected); move testdata/vocab and testdata/tokenizers out for the carry.
# After: unpack $OUT/ptx.tar.xz into kernels/cuda, go test ./kernels/cuda.
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/split}"
ptx_all /tmp/px
for f in kernels/cuda/*.ptx; do
	m=$(basename "$f")
	case $m in sample.ptx) continue ;; esac
	tail -n +2 "$f" >/tmp/body.a
	tail -n +2 "/tmp/px/$m" >/tmp/body.b 2>/dev/null
	cmp -s /tmp/body.a /tmp/body.b || el "body differs: $m"
done
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestSampleAhead|TestFeeder|TestArgMax|TestTopK|TestKernelNamesExist|TestEmbeddedKernelsWait' 150
(cd inference/engine && timeout -s KILL 150 "$R/bin/dev/engine.test" -test.run 'CUDA' 2>&1 | tail -2) &
wait
el "tests done"
b() { s "$E" bench -backend cuda -streams 1 -p 16 -n 128 -m /tmp/q4.gguf $1; }
el "8B 1 stream: greedy $(b '-r 1') sample+penalty1.1 $(b '-sample -penalty 1.1') temp1 $(b '-temp 1')"
