#!/bin/sh
# next-gpu.sh: session 16's last GPU call: the whole CUDA suite (but the OOM test) with
# this session's defaults (cuBLASLt pairs on, attention_dec at up to four blocks an SM),
# the goldens, deepseek2's CUDA tests, then the README's figures, the serving ones
# against EMBER_CUDA_LT_NO_PAIRS=1 in the same call.
# Where Go is: build/dev-build.sh (bin/dev). On the GPU:
#   sh build/next-gpu.sh   (carry bin/dev; give the call 600 s)
set -u
R=$PWD
for f in bin/dev/*.xz; do
	[ -e "$f" ] || continue
	xz -d -f "$f" 2>/dev/null || python3 -c 'import lzma,sys;open(sys.argv[1][:-3],"wb").write(lzma.open(sys.argv[1]).read())' "$f"
done
chmod +x bin/dev/* 2>/dev/null
E=$R/bin/dev/ember
L=${OUT:-/tmp/next-gpu}
mkdir -p "$L"
(
	$E synth /tmp/q4.gguf -preset llama3.1-8b -ftype q4_k_m >/dev/null 2>&1
	$E synth /tmp/q8.gguf -preset llama3.1-8b -ftype q8_0 >/dev/null 2>&1
) &
$E synth /tmp/v2.gguf -preset deepseek-v2-lite -ftype q4_k_m >/dev/null 2>&1 &
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
b() { timeout -s KILL 90 "$E" bench -backend cuda "$@" 2>&1 | grep '^| \|ember:' | tail -1; }
echo "8B Q4_K_M: $(b -m /tmp/q4.gguf -p 512 -n 0 -r 2 | cut -d'|' -f7-8) $(b -m /tmp/q4.gguf -p 0 -n 128 -r 3 | cut -d'|' -f7-8)"
echo "8B Q8_0 tg128: $(b -m /tmp/q8.gguf -p 0 -n 128 -r 3 | cut -d'|' -f8)"
echo "V2-Lite: $(b -m /tmp/v2.gguf -p 512 -n 0 -r 2 | cut -d'|' -f7-8) $(b -m /tmp/v2.gguf -p 0 -n 128 -r 3 | cut -d'|' -f7-8)"
for i in 1 2; do
	echo "8B 64 streams: $(b -m /tmp/q4.gguf -streams 64 -p 512 -n 128 | cut -d'|' -f6); no pairs: $(EMBER_CUDA_LT_NO_PAIRS=1 b -m /tmp/q4.gguf -streams 64 -p 512 -n 128 | cut -d'|' -f6)"
done
echo "V2-Lite 64 streams: $(b -m /tmp/v2.gguf -streams 64 -p 512 -n 128 | cut -d'|' -f6); no pairs: $(EMBER_CUDA_LT_NO_PAIRS=1 b -m /tmp/v2.gguf -streams 64 -p 512 -n 128 | cut -d'|' -f6)"
