#!/bin/sh
# next-gpu.sh: session 18's fifth GPU call: the chunked flushes' size (EMBER_CUDA_CHUNK)
# and the ramp after a sync (the first two batches a quarter and a half of a chunk;
# EMBER_CUDA_CHUNK_RAMP=0 turns it off): the tests with the defaults (64, ramp on), then
# tg128 and serving for each setting, interleaved.
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
g conf $C 200 "$T" -test.run 'Conformance$|Fused|Graph|Queued|TopK|ArgMax|MatVecBatch1|Chunk'
g goldens inference/model/archs 200 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA'
g deepseek2 inference/model/deepseek2 200 "$R/bin/dev/deepseek2.test" -test.run 'CUDA'
wait
for f in "$L"/*.log; do
	tail -1 "$f"
	grep -E "^--- FAIL|_test.go:[0-9]+:" "$f" | head -8
done
b() { timeout -s KILL 90 "$E" bench -backend cuda "$@" 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f7-8 | sed 's/ tg128 | //; s/ pp512 | //'; }
bs() { timeout -s KILL 90 "$E" bench -backend cuda "$@" 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f6; }
for i in 1 2; do
	for c in 128:0 64:0 64:1 128:1; do
		export EMBER_CUDA_CHUNK=${c%:*} EMBER_CUDA_CHUNK_RAMP=${c#*:}
		echo "chunk $c: 8B $(b -m /tmp/q4.gguf -p 0 -n 128 -r 3) V2 $(b -m /tmp/v2.gguf -p 0 -n 128 -r 3) Q8 $(b -m /tmp/q8.gguf -p 0 -n 128 -r 3)"
	done
done
for c in 128:0 64:0 64:1 128:1; do
	export EMBER_CUDA_CHUNK=${c%:*} EMBER_CUDA_CHUNK_RAMP=${c#*:}
	echo "chunk $c: 64 streams 8B $(bs -m /tmp/q4.gguf -streams 64 -p 512 -n 128) V2 $(bs -m /tmp/v2.gguf -streams 64 -p 512 -n 128)"
done
unset EMBER_CUDA_CHUNK EMBER_CUDA_CHUNK_RAMP
echo "V2 pp512: $(b -m /tmp/v2.gguf -p 512 -n 0 -r 3)"
(cd $L && tar czf logs.tgz *.log && rm -rf *.log)
