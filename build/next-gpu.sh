#!/bin/sh
# next-gpu.sh: session 17's check of the final commit (the queue's PDL flags trimmed on a
# fusion's pop; no kernel changed): the CUDA suite but the OOM test, the goldens,
# deepseek2's CUDA tests; then where the host's time goes in a decode run
# (EMBER_CUDA_STATS) at one stream and at 64, and the README's figures once.
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
g attention $C 300 "$T" -test.run 'Attention'
g products $C 300 "$T" -test.run 'MatMul|MMQ|MMV|MatVec|Cublas|Products|TopK|ArgMax|Lt' -test.skip 'TestCublasOutOfMemoryFallsBack'
g conformance $C 300 "$T" -test.run 'Conformance'
g rest $C 300 "$T" -test.skip 'Attention|MatMul|MMQ|MMV|MatVec|Cublas|Products|TopK|ArgMax|Conformance|Lt'
g goldens inference/model/archs 300 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA'
g deepseek2 inference/model/deepseek2 300 "$R/bin/dev/deepseek2.test" -test.run 'CUDA'
wait
for f in "$L"/*.log; do
	tail -1 "$f"
	grep -E "^--- FAIL|_test.go:[0-9]+:" "$f" | head -8
done
(cd $L && tar czf logs.tgz *.log && rm -f *.log)
b() { timeout -s KILL 90 "$E" bench -backend cuda "$@" 2>&1 | grep '^| \|ember:\|cuda stats\|flushes\|products on' | tail -6; }
echo "== 8B tg128, stats"; EMBER_CUDA_STATS=1 b -m /tmp/q4.gguf -p 0 -n 128 -r 1
echo "== 8B 64 streams, stats"; EMBER_CUDA_STATS=1 b -m /tmp/q4.gguf -streams 64 -p 512 -n 128
echo "== V2-Lite tg128, stats"; EMBER_CUDA_STATS=1 b -m /tmp/v2.gguf -p 0 -n 128 -r 1
echo "== figures"
b -m /tmp/q4.gguf -p 512 -n 128 -r 3
b -m /tmp/v2.gguf -p 512 -n 128 -r 3
b -m /tmp/q4.gguf -streams 64 -p 512 -n 128
b -m /tmp/v2.gguf -streams 64 -p 512 -n 128
