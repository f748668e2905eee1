#!/bin/sh
# next-gpu.sh: session 17's first GPU call: mmq.cu with the copies of each step worked
# out once (MqIssue), compiled here to PTX (EMBER_CUDA_PTX_DIR) and brought back through
# $OUT; the product, conformance, golden and deepseek2 tests on it; then the products
# and serving timed on the embedded PTX (old) against it (new), in the same call.
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
P=/tmp/ptx
mkdir -p "$L" "$P"
(
	$E synth /tmp/q4.gguf -preset llama3.1-8b -ftype q4_k_m >/dev/null 2>&1
) &
$E synth /tmp/v2.gguf -preset deepseek-v2-lite -ftype q4_k_m >/dev/null 2>&1 &
(cd kernels/cuda && for m in mmq; do
	h=$(cat $m.cu $(LC_ALL=C ls *.cuh) | sha256sum | cut -d" " -f1)
	nvcc -arch=sm_90 -ptx -O3 -fmad=false -o /tmp/$m.raw.ptx $m.cu && { echo "// ember-sources-sha256: $h"; cat /tmp/$m.raw.ptx; } >$P/$m.ptx
	cp $P/$m.ptx "$L/"
done; for m in ops quant matmul dequant mmf mvs moe sample attention attention_dec attention_short attention_split attention_tc; do cp $m.ptx $P/; done)
ls $P | wc -l
C=inference/backend/cuda T=$R/bin/dev/cuda.test
g() { # name dir limit binary args...
	n=$1 d=$2 l=$3
	shift 3
	(cd "$d" && EMBER_CUDA_PTX_DIR=$P timeout -s KILL "$l" "$@" >"$L/$n.log" 2>&1; echo "$n rc $?" >>"$L/$n.log") &
}
g products $C 300 "$T" -test.run 'MatMul|MMQ|MMV|Cublas|Products|Lt' -test.skip 'TestCublasOutOfMemoryFallsBack'
g conformance $C 300 "$T" -test.run 'Conformance'
g goldens inference/model/archs 300 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA'
g deepseek2 inference/model/deepseek2 300 "$R/bin/dev/deepseek2.test" -test.run 'CUDA'
wait
for f in "$L"/*.log; do
	tail -1 "$f"
	grep -E "^--- FAIL|_test.go:[0-9]+:" "$f" | head -8
done
pp() { (cd $C && EMBER_CUDA_BENCH=1 EMBER_CUDA_BENCH_ROWS=16,32,64 EMBER_CUDA_BENCH_SHAPES=4096x4096,14336x4096,4096x14336 timeout -s KILL 120 "$T" -test.run PrefillProducts -test.v 2>&1 | grep rows: | sed 's/ mmf [^)]*)//'); }
echo "== products, old"; pp
echo "== products, new"; EMBER_CUDA_PTX_DIR=$P pp
b() { timeout -s KILL 90 "$E" bench -backend cuda "$@" 2>&1 | grep '^| \|ember:' | tail -1 | cut -d'|' -f6; }
for s in 16 32; do
	echo "8B $s streams: old $(b -m /tmp/q4.gguf -streams $s -p 512 -n 128) new $(EMBER_CUDA_PTX_DIR=$P b -m /tmp/q4.gguf -streams $s -p 512 -n 128)"
done
for i in 1 2; do
	echo "V2-Lite 64: old $(b -m /tmp/v2.gguf -streams 64 -p 512 -n 128) new $(EMBER_CUDA_PTX_DIR=$P b -m /tmp/v2.gguf -streams 64 -p 512 -n 128)"
	echo "8B 64: old $(b -m /tmp/q4.gguf -streams 64 -p 512 -n 128) new $(EMBER_CUDA_PTX_DIR=$P b -m /tmp/q4.gguf -streams 64 -p 512 -n 128) new QKVO-mmq $(EMBER_CUDA_F16_MIN_ELEMS=33554432 EMBER_CUDA_PTX_DIR=$P b -m /tmp/q4.gguf -streams 64 -p 512 -n 128)"
done
echo "8B 64 all mmq: new $(EMBER_CUDA_F16_COPIES=off EMBER_CUDA_PTX_DIR=$P b -m /tmp/q4.gguf -streams 64 -p 512 -n 128)"
