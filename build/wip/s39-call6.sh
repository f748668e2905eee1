#!/bin/sh
# s39-call6.sh: penalized draws on the GPU (sample.cu's sample_penalize_f32 before the
# top-k or whole-row draw; the row's fed token counted on the device when its step goes
# ahead). Makes sample.ptx ($OUT), runs the feeder tests (penalized draws, SeenFed ones
# against the feed's ids, queued steps) and the engine's TestAheadCUDA (penalized
# requests among its sampled ones; the last alone on fresh engines) on it; then 8B
# Q4_K_M streams of 16 + 128 drawn as the app draws with a repeat penalty of 1.1 over 64
# tokens (as Ollama's defaults), against bin/dev/ember-old (e347f2c given the bench's
# -penalty flag: such rows read to the host every token), and without the penalty.
# bin/dev: ember, ember-old, TESTS="cuda engine" (without testdata/golden, vocab,
# tokenizers).
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s39c6}"
sh build/ptx-copy.sh /tmp/px sample || el "PTX FAILED"
cp /tmp/px/sample.ptx "$L/"
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestSampleAhead|TestFeeder|TestArgMax|TestTopK|TestKernelNamesExist|TestEmbeddedKernelsWait' 150
(cd inference/engine && timeout -s KILL 150 "$R/bin/dev/engine.test" -test.v -test.run 'CUDA' 2>&1 | grep -E -- '^(--- |ok|FAIL|PASS)|_test.go:[0-9]+: [^0-9]' | tail -8) &
wait
el "tests done"
O=$R/bin/dev/ember-old
b() { s "$1" bench -backend cuda -streams $2 -p 16 -n 128 -m /tmp/q4.gguf -sample $3; }
for round in 1 2; do
	el "1 stream penalty1.1: old $(b $O 1 '-penalty 1.1') new $(b $E 1 '-penalty 1.1'); none: new $(b $E 1 '-r 1')"
	el "4 streams penalty1.1: old $(b $O 4 '-penalty 1.1') new $(b $E 4 '-penalty 1.1'); none: new $(b $E 4 '-r 1')"
done
el "16 streams penalty1.1: old $(b $O 16 '-penalty 1.1') new $(b $E 16 '-penalty 1.1')"
