#!/bin/sh
# next-gpu.sh: the first GPU call of the session after 15 (inference/backend/cuda/NOTES.md,
# "Next steps (session 15)"): ltpair.go's batched pairs and lttune.go's timing of
# cuBLASLt's candidate algorithms, both written and not yet run on a GPU.
# Where Go is: build/dev-build.sh (bin/dev: the binary and three test binaries, ~16 MB
# compressed; with the working tree ~65 MB, under the device tool's 64 MiB). On the GPU:
#   sh build/next-gpu.sh   (carry bin/dev; about 8 minutes: give the call 600 s)
set -u
R=$PWD
for f in bin/dev/*.xz; do
	[ -e "$f" ] || continue
	xz -d -f "$f" 2>/dev/null || python3 -c 'import lzma,sys;open(sys.argv[1][:-3],"wb").write(lzma.open(sys.argv[1]).read())' "$f"
done
chmod +x bin/dev/* 2>/dev/null
E=$R/bin/dev/ember
$E synth /tmp/q4.gguf -preset llama3.1-8b -ftype q4_k_m >/dev/null 2>&1 &
$E synth /tmp/v2.gguf -preset deepseek-v2-lite -ftype q4_k_m >/dev/null 2>&1 &
L=${OUT:-/tmp/next-gpu}
mkdir -p "$L"
# The tests that reach cuBLASLt, with and without pairs, and the goldens forced onto it.
(cd inference/backend/cuda && timeout -s KILL 300 "$R/bin/dev/cuda.test" -test.v \
	-test.run 'TestLtPairs|TestLtTune|TestCublasMatMul|TestF16Copies|TestFused|TestBatchLtCalls' >"$L/cuda.log" 2>&1
	echo "cuda rc $?" >>"$L/cuda.log") &
(cd inference/model/archs && EMBER_CUDA_LT_PAIRS=1 timeout -s KILL 300 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA' \
	>"$L/gold.log" 2>&1
	echo "goldens (pairs on) rc $?" >>"$L/gold.log") &
wait
grep -E "^(--- |ok|FAIL|PASS)|rc " "$L/cuda.log" | head -30
tail -2 "$L/gold.log"
b() { timeout -s KILL 100 "$E" bench -m /tmp/q4.gguf -backend cuda "$@" 2>&1 | grep '^| ' | tail -1; }
for i in 1 2 3; do
	echo "64 streams, default: $(b -streams 64 -p 512 -n 128 | cut -d'|' -f6)"
	echo "64 streams, pairs:   $(EMBER_CUDA_LT_PAIRS=1 b -streams 64 -p 512 -n 128 | cut -d'|' -f6)"
	echo "64 streams, tuned:   $(EMBER_CUDA_LT_TUNE=1 b -streams 64 -p 512 -n 128 | cut -d'|' -f6)"
	echo "64 streams, both, K/V on copies: $(EMBER_CUDA_LT_PAIRS=1 EMBER_CUDA_LT_TUNE=1 EMBER_CUDA_F16_MIN_ELEMS=0 \
		b -streams 64 -p 512 -n 128 | cut -d'|' -f6)"
done
for i in 1 2; do # DeepSeek-V2-Lite: its shared experts' gate and up pair
	echo "V2-Lite 64 streams, default: $(timeout -s KILL 100 "$E" bench -m /tmp/v2.gguf -backend cuda -streams 64 -p 512 \
		-n 128 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f6)"
	echo "V2-Lite 64 streams, pairs and tuned: $(EMBER_CUDA_LT_PAIRS=1 EMBER_CUDA_LT_TUNE=1 timeout -s KILL 100 "$E" bench \
		-m /tmp/v2.gguf -backend cuda -streams 64 -p 512 -n 128 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f6)"
done
for v in "" EMBER_CUDA_LT_PAIRS=1 EMBER_CUDA_LT_TUNE=1; do
	echo "pp512 ${v:-default}: $(env $v "$E" bench -m /tmp/q4.gguf -backend cuda -p 512 -n 0 -r 3 2>&1 | grep pp512 | cut -d'|' -f8)"
done
EMBER_CUDA_LT_PAIRS=1 EMBER_CUDA_LT_TUNE=1 EMBER_CUDA_STATS=1 "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 \
	-n 128 2>&1 | grep -i "cuBLASLt\|tuned" | sort | uniq -c | sort -rn | head -20
# The step's kernels with pairs on (build/profile-cuda.sh; ncu is on the H200 image).
EMBER_CUDA_LT_PAIRS=1 AT=50 timeout -s KILL 200 build/profile-cuda.sh "$E" /tmp/q4.gguf /tmp/s64p -streams 64 -p 512 -n 128 \
	>/dev/null 2>&1
head -12 /tmp/s64p/summary.txt
