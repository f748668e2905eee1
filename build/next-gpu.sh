#!/bin/sh
# next-gpu.sh: the first GPU call of the session after 15 (inference/backend/cuda/NOTES.md,
# "Next steps (session 15)"): ltpair.go's batched pairs, written and not yet run on a GPU.
# Where Go is: build/dev-build.sh, then move the three test binaries to bin/tests (the
# working tree and both folders must stay under the device tool's 64 MiB). On the GPU:
#   sh build/next-gpu.sh   (carry bin/dev and bin/tests; about 5 minutes)
set -u
R=$PWD
for f in bin/dev/*.xz bin/tests/*.xz; do
	[ -e "$f" ] || continue
	xz -d -f "$f" 2>/dev/null || python3 -c 'import lzma,sys;open(sys.argv[1][:-3],"wb").write(lzma.open(sys.argv[1]).read())' "$f"
done
chmod +x bin/dev/* bin/tests/* 2>/dev/null
E=$R/bin/dev/ember
$E synth /tmp/q4.gguf -preset llama3.1-8b -ftype q4_k_m >/dev/null 2>&1 &
L=${OUT:-/tmp/next-gpu}
mkdir -p "$L"
# The tests that reach cuBLASLt, with and without pairs, and the goldens forced onto it.
(cd inference/backend/cuda && timeout -s KILL 300 "$R/bin/tests/cuda.test" -test.v \
	-test.run 'TestLtPairs|TestCublasMatMul|TestF16Copies|TestFused|TestBatchLtCalls' >"$L/cuda.log" 2>&1
	echo "cuda rc $?" >>"$L/cuda.log") &
(cd inference/model/archs && EMBER_CUDA_LT_PAIRS=1 timeout -s KILL 300 "$R/bin/tests/archs.test" -test.run 'TestGoldensCUDA' \
	>"$L/gold.log" 2>&1
	echo "goldens (pairs on) rc $?" >>"$L/gold.log") &
wait
grep -E "^(--- |ok|FAIL|PASS)|rc " "$L/cuda.log" | head -30
tail -2 "$L/gold.log"
b() { timeout -s KILL 100 "$E" bench -m /tmp/q4.gguf -backend cuda "$@" 2>&1 | grep '^| ' | tail -1; }
for i in 1 2 3; do
	echo "64 streams, pairs off: $(b -streams 64 -p 512 -n 128 | cut -d'|' -f6)"
	echo "64 streams, pairs on:  $(EMBER_CUDA_LT_PAIRS=1 b -streams 64 -p 512 -n 128 | cut -d'|' -f6)"
done
echo "pp512 off: $(b -p 512 -n 0 -r 3 | cut -d'|' -f8)  on: $(EMBER_CUDA_LT_PAIRS=1 b -p 512 -n 0 -r 3 | cut -d'|' -f8)"
EMBER_CUDA_LT_PAIRS=1 EMBER_CUDA_STATS=1 "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128 2>&1 |
	grep "cuBLASLt"
# The step's kernels with pairs on (build/profile-cuda.sh; ncu is on the H200 image).
EMBER_CUDA_LT_PAIRS=1 AT=50 timeout -s KILL 200 build/profile-cuda.sh "$E" /tmp/q4.gguf /tmp/s64p -streams 64 -p 512 -n 128 \
	>/dev/null 2>&1
head -12 /tmp/s64p/summary.txt
