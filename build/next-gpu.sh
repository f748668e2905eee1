#!/bin/sh
# next-gpu.sh: session 19's first GPU call: every CUDA test group of gpu-check.sh (each
# under a limit, logs kept), then the event clock (EMBER_CUDA_STATS=1, moved onto em_load's
# entry points in session 18 and not yet run on a GPU) on tg of 8B and V2-Lite, and tg128
# for reference.
# Where Go is: build/dev-build.sh (bin/dev). On the GPU:
#   sh build/next-gpu.sh   (carry bin/dev; give the call 600 s)
set -u
R=$PWD
for f in bin/dev/*.xz; do [ -e "$f" ] && xz -d -f "$f"; done
chmod +x bin/dev/*
E=$R/bin/dev/ember L=${OUT:-/tmp/next-gpu}
mkdir -p "$L"
[ -f /tmp/v2.gguf ] || $E synth /tmp/v2.gguf -preset deepseek-v2-lite -ftype q4_k_m >/dev/null 2>&1 &
[ -f /tmp/q4.gguf ] || $E synth /tmp/q4.gguf -preset llama3.1-8b -ftype q4_k_m >/dev/null 2>&1 &
C=inference/backend/cuda T=$R/bin/dev/cuda.test
g() { # name dir limit binary args...
	n=$1 d=$2 l=$3
	shift 3
	(cd "$d" && timeout -s KILL "$l" "$@" >"$L/$n.log" 2>&1; echo "$n rc $?" >>"$L/$n.log") &
}
g attention $C 330 "$T" -test.run 'Attention'
g products $C 330 "$T" -test.run 'MatMul|MMQ|MMV|MatVec|Cublas|Products|TopK|ArgMax' -test.skip 'TestCublasOutOfMemoryFallsBack'
g conformance $C 330 "$T" -test.run 'Conformance'
g rest $C 330 "$T" -test.skip 'Attention|MatMul|MMQ|MMV|MatVec|Cublas|Products|TopK|ArgMax|Conformance'
g goldens inference/model/archs 330 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA'
g deepseek2 inference/model/deepseek2 330 "$R/bin/dev/deepseek2.test" -test.run 'CUDA'
wait
for f in "$L"/*.log; do
	tail -1 "$f"
	grep -E "^--- FAIL|_test.go:[0-9]+:|^ok|^PASS|^FAIL" "$f" | head -8
done
echo "== stats"
EMBER_CUDA_STATS=1 timeout -s KILL 60 "$E" bench -backend cuda -m /tmp/q4.gguf -p 0 -n 64 -r 1 2>&1 | tail -12
EMBER_CUDA_STATS=1 timeout -s KILL 60 "$E" bench -backend cuda -m /tmp/v2.gguf -p 0 -n 64 -r 1 2>&1 | tail -12
b() { timeout -s KILL 90 "$E" bench -backend cuda "$@" 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f7-8 | sed 's/ tg128 | //; s/ pp512 | //'; }
echo "tg128: 8B $(b -m /tmp/q4.gguf -p 0 -n 128 -r 3) V2 $(b -m /tmp/v2.gguf -p 0 -n 128 -r 3)"
(cd $L && tar czf logs.tgz *.log && rm -rf *.log)
