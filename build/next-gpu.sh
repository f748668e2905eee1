#!/bin/sh
# next-gpu.sh: session 18's fourth GPU call: batches flushed in chunks (graph.go's
# EMBER_CUDA_CHUNK, default 128) so that the device starts a step while the host still
# builds it: the tests with the default, then tg128 and serving at chunks 0 (the old
# way), 64, 128 and 256, interleaved.
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
[ -f /tmp/q8.gguf ] || $E synth /tmp/q8.gguf -preset llama3.1-8b -ftype q8_0 >/dev/null 2>&1 &
C=inference/backend/cuda T=$R/bin/dev/cuda.test
g() { # name dir limit binary args...
	n=$1 d=$2 l=$3
	shift 3
	(cd "$d" && timeout -s KILL "$l" "$@" >"$L/$n.log" 2>&1; echo "$n rc $?" >>"$L/$n.log") &
}
g conf $C 250 "$T" -test.run 'Conformance$|Fused|Graph|Queued|TopK|ArgMax|MatVecBatch1'
g goldens inference/model/archs 250 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA'
g deepseek2 inference/model/deepseek2 250 "$R/bin/dev/deepseek2.test" -test.run 'CUDA'
wait
for f in "$L"/*.log; do
	tail -1 "$f"
	grep -E "^--- FAIL|_test.go:[0-9]+:" "$f" | head -8
done
b() { timeout -s KILL 90 "$E" bench -backend cuda "$@" 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f6-8 | sed 's/ *| tg128 | //'; }
for i in 1 2; do
	for c in 0 64 128 256; do
		echo "chunk $c: 8B $(EMBER_CUDA_CHUNK=$c b -m /tmp/q4.gguf -p 0 -n 128 -r 3) V2 $(EMBER_CUDA_CHUNK=$c b -m /tmp/v2.gguf -p 0 -n 128 -r 3)"
	done
done
for c in 0 128; do
	echo "chunk $c: Q8 $(EMBER_CUDA_CHUNK=$c b -m /tmp/q8.gguf -p 0 -n 128 -r 3)"
	echo "chunk $c: 8B 64 streams $(EMBER_CUDA_CHUNK=$c b -m /tmp/q4.gguf -streams 64 -p 512 -n 128)"
	echo "chunk $c: V2 64 streams $(EMBER_CUDA_CHUNK=$c b -m /tmp/v2.gguf -streams 64 -p 512 -n 128)"
done
echo "--- V2 tg128 stats, chunk 128"; EMBER_CUDA_STATS=1 timeout -s KILL 120 "$E" bench -backend cuda -m /tmp/v2.gguf -p 0 -n 128 -r 1 2>&1 | grep -E '^\| |cuda stats|device \(events' | tail -3
echo "8B pp512: $(b -m /tmp/q4.gguf -p 512 -n 0 -r 3 | cut -c1-60)"
(cd $L && tar czf logs.tgz *.log && rm -rf *.log)
