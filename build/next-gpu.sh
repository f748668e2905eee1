#!/bin/sh
# next-gpu.sh: session 16's GPU A/B (inference/backend/cuda/NOTES.md): attention_dec64/128
# bounded to 64 registers for four blocks an SM (its PTX made here, and a variant
# bounded for three), sized for as many blocks as make the grid one wave
# (EMBER_CUDA_DEC_BLOCKS forces 2-4); ltpair.go's pairs with outputs the other way round
# refused, and the tuning's workspace fix; TestLtPairs at real shapes.
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
$E synth /tmp/q4.gguf -preset llama3.1-8b -ftype q4_k_m >/dev/null 2>&1 &
$E synth /tmp/v2.gguf -preset deepseek-v2-lite -ftype q4_k_m >/dev/null 2>&1 &
L=${OUT:-/tmp/next-gpu}
mkdir -p "$L"
P=/tmp/ptx P3=/tmp/ptx3
mkdir -p $P $P3
cp kernels/cuda/*.ptx $P/
cp kernels/cuda/*.ptx $P3/
mk() { # mk DIR FILE.cu: its PTX into DIR (the name the .cu's), registers into $L
	k=$(basename "$2" .cu)
	h=$(cat kernels/cuda/$k.cu $(LC_ALL=C ls kernels/cuda/*.cuh) | sha256sum | cut -d" " -f1)
	nvcc -arch=sm_90 -ptx -O3 -fmad=false -Ikernels/cuda -o /tmp/$k.ptx "$2" || echo "nvcc $2 failed"
	{ echo "// ember-sources-sha256: $h"; cat /tmp/$k.ptx; } >"$1/$k.ptx"
	nvcc -arch=sm_90 -cubin -O3 -fmad=false -Ikernels/cuda -Xptxas -v -o /tmp/$k.cubin "$2" 2>&1 |
		grep -A3 "entry function 'attention_dec" | grep -o "entry function '[a-z_0-9]*'\|Used [0-9]* registers\|[0-9]* bytes spill stores" | paste - - -
}
mk $P kernels/cuda/attention_dec.cu
cp $P/attention_dec.ptx "$L/"
mkdir -p /tmp/v3 && sed 's/__launch_bounds__(DEC_THREADS, 4)/__launch_bounds__(DEC_THREADS, 3)/' kernels/cuda/attention_dec.cu >/tmp/v3/attention_dec.cu
mk $P3 /tmp/v3/attention_dec.cu
export EMBER_CUDA_PTX_DIR=$P
(cd inference/backend/cuda && timeout -s KILL 300 "$R/bin/dev/cuda.test" -test.v \
	-test.run 'TestDec|TestDecode|TestAttention|TestFusedAttention|TestLtPairs|TestLtTune|TestCublasMatMul|TestBatchLtCalls' \
	>"$L/cuda.log" 2>&1
	echo "cuda rc $?" >>"$L/cuda.log") &
(cd inference/model/archs && timeout -s KILL 300 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA' >"$L/gold.log" 2>&1
	echo "goldens rc $?" >>"$L/gold.log"
	EMBER_CUDA_LT_PAIRS=1 EMBER_CUDA_LT_TUNE=1 timeout -s KILL 200 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA$' >>"$L/gold.log" 2>&1
	echo "goldens (pairs, tuned) rc $?" >>"$L/gold.log"
	cd ../deepseek2 && timeout -s KILL 200 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' >"$L/ds2.log" 2>&1
	echo "deepseek2 rc $?" >>"$L/ds2.log") &
wait
grep -E "^(--- FAIL|ok|FAIL|PASS)|rc |panic|_test.go" "$L/cuda.log" | head -30
grep -c "^--- PASS" "$L/cuda.log"
grep -E "rc |FAIL" "$L/gold.log" "$L/ds2.log" | head
b() { timeout -s KILL 100 "$E" bench -m /tmp/q4.gguf -backend cuda "$@" 2>&1 | grep '^| \|ember:' | tail -1; }
s64() { b -streams 64 -p 512 -n 128 | cut -d'|' -f6; }
for i in 1 2; do
	echo "64 streams, 4 blocks:  $(s64)"
	echo "64 streams, 3 blocks (64 regs): $(EMBER_CUDA_DEC_BLOCKS=3 s64)"
	echo "64 streams, 3 blocks (80 regs): $(EMBER_CUDA_PTX_DIR=$P3 EMBER_CUDA_DEC_BLOCKS=3 s64)"
	echo "64 streams, 2 blocks rings of 4 (80 regs): $(EMBER_CUDA_PTX_DIR=$P3 EMBER_CUDA_DEC_BLOCKS=2 s64)"
	echo "64 streams, pairs: $(EMBER_CUDA_LT_PAIRS=1 s64)"
	echo "64 streams, pairs, tuned: $(EMBER_CUDA_LT_PAIRS=1 EMBER_CUDA_LT_TUNE=1 s64)"
done
echo "tg128: $(b -p 0 -n 128 -r 2 | cut -d'|' -f8); 80 regs: $(EMBER_CUDA_PTX_DIR=$P3 b -p 0 -n 128 -r 2 | cut -d'|' -f8)"
v2() { timeout -s KILL 100 "$E" bench -m /tmp/v2.gguf -backend cuda -streams 64 -p 512 -n 128 2>&1 | grep '^| \|ember:' | tail -1 | cut -d'|' -f6; }
echo "V2-Lite 64 streams, default: $(v2); pairs: $(EMBER_CUDA_LT_PAIRS=1 v2); pairs, tuned: $(EMBER_CUDA_LT_PAIRS=1 EMBER_CUDA_LT_TUNE=1 v2)"
for v in EMBER_CUDA_X=0 EMBER_CUDA_LT_PAIRS=1; do
	echo "pp512 $v: $(env $v "$E" bench -m /tmp/q4.gguf -backend cuda -p 512 -n 0 -r 3 2>&1 | grep 'pp512\|ember:' | cut -d'|' -f8)"
done
EMBER_CUDA_LT_PAIRS=1 EMBER_CUDA_STATS=1 "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128 2>&1 | grep "products on cuBLASLt"
AT=50 timeout -s KILL 120 build/profile-cuda.sh "$E" /tmp/q4.gguf "$L/s64" -streams 64 -p 512 -n 128 >/dev/null 2>&1
head -8 "$L/s64/summary.txt"
rm -f "$L/s64/kernels.csv"
