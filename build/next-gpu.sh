#!/bin/sh
# next-gpu.sh: session 17's last GPU call: reads to the host through pinned memory
# (stage.go's read: the logits of a bench token, sampled ids) checked by the goldens,
# deepseek2's and the backend's tests, then timed against EMBER_CUDA_SYNC_READS=1 (the
# synchronous copy into Go memory it replaces), interleaved.
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
g products $C 200 "$T" -test.run 'MatMul|MMQ|MMV|TopK|ArgMax|Sample' -test.skip 'TestCublasOutOfMemoryFallsBack'
g rest $C 200 "$T" -test.run 'Conformance|Fused|Backend|Write|Read|Stage|Fault'
g goldens inference/model/archs 200 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA'
g deepseek2 inference/model/deepseek2 200 "$R/bin/dev/deepseek2.test" -test.run 'CUDA'
wait
for f in "$L"/*.log; do
	tail -1 "$f"
	grep -E "^--- FAIL|_test.go:[0-9]+:" "$f" | head -8
done
(cd $L && tar czf logs.tgz *.log && rm -f *.log)
b() { timeout -s KILL 90 "$E" bench -backend cuda "$@" 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f6-8; }
for i in 1 2; do
	echo "8B tg128: new $(b -m /tmp/q4.gguf -p 0 -n 128 -r 3) sync $(EMBER_CUDA_SYNC_READS=1 b -m /tmp/q4.gguf -p 0 -n 128 -r 3)"
	echo "V2 tg128: new $(b -m /tmp/v2.gguf -p 0 -n 128 -r 3) sync $(EMBER_CUDA_SYNC_READS=1 b -m /tmp/v2.gguf -p 0 -n 128 -r 3)"
done
echo "8B Q4 64 streams: new $(b -m /tmp/q4.gguf -streams 64 -p 512 -n 128) sync $(EMBER_CUDA_SYNC_READS=1 b -m /tmp/q4.gguf -streams 64 -p 512 -n 128)"
echo "8B Q8 tg128: $( $E synth /tmp/q8.gguf -preset llama3.1-8b -ftype q8_0 >/dev/null 2>&1; b -m /tmp/q8.gguf -p 0 -n 128 -r 3) sync $(EMBER_CUDA_SYNC_READS=1 b -m /tmp/q8.gguf -p 0 -n 128 -r 3)"
