#!/bin/sh
# next-gpu.sh: session 19's last GPU call: the final build's checks (the goldens,
# conformance, fused and deepseek2's CUDA tests, each under a limit), then where the
# 8B 64-stream step's time goes: the synchronized per-kernel profile
# (EMBER_CUDA_PROFILE) of serving with and without the decode (-n 64 against -n 1),
# and tg128 for reference.
# Where Go is: build/dev-build.sh (bin/dev). On the GPU:
#   sh build/next-gpu.sh   (carry bin/dev; give the call 340 s)
set -u
R=$PWD
for f in bin/dev/*.xz; do [ -e "$f" ] && xz -d -f "$f"; done
chmod +x bin/dev/*
E=$R/bin/dev/ember L=${OUT:-/tmp/next-gpu}
mkdir -p "$L"
[ -f /tmp/q4.gguf ] || $E synth /tmp/q4.gguf -preset llama3.1-8b -ftype q4_k_m >/dev/null 2>&1 &
C=inference/backend/cuda T=$R/bin/dev/cuda.test
g() { # name dir limit binary args...
	n=$1 d=$2 l=$3
	shift 3
	(cd "$d" && timeout -s KILL "$l" "$@" >"$L/$n.log" 2>&1; echo "$n rc $?" >>"$L/$n.log") &
}
g fused $C 120 "$T" -test.run 'FusedDecoderLayers|FuseQueue|Graph|Queued|Chunk|PDL|Pdl'
g conf $C 120 "$T" -test.run 'Conformance$|MatVecBatch1|TopK|ArgMax'
g goldens inference/model/archs 120 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA'
g deepseek2 inference/model/deepseek2 120 "$R/bin/dev/deepseek2.test" -test.run 'CUDA'
wait
for f in "$L"/*.log; do
	tail -1 "$f"
	grep -E "^--- FAIL|_test.go:[0-9]+:|^panic|SIGSEGV" "$f" | head -8
done
for n in 64 1; do
	echo "== 64 streams, -p 512 -n $n, synchronized profile"
	EMBER_CUDA_PROFILE=1 timeout -s KILL 75 "$E" bench -backend cuda -m /tmp/q4.gguf -streams 64 -p 512 -n $n 2>&1 | grep -E "^\| |cuda profile|  [0-9. ]+ ms" | head -26
done
echo "tg128 8B $(timeout -s KILL 60 "$E" bench -backend cuda -m /tmp/q4.gguf -p 0 -n 128 -r 3 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8)"
(cd $L && tar czf logs.tgz *.log && rm -rf *.log)
