#!/bin/sh
# next-gpu.sh: the first GPU call of session 16 (inference/backend/cuda/NOTES.md, "Next
# steps (session 15)"): attention_dec64/128 keeping only its real rows' scores and
# bounded to 80 registers for three blocks an SM (its PTX made here first), ltpair.go's
# batched pairs and lttune.go's timing of cuBLASLt's candidates (both off by default,
# never run on a GPU before).
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
# attention_dec's PTX from nvcc on this machine (the committed one is the kernel before).
P=/tmp/ptx
mkdir -p $P
cp kernels/cuda/*.ptx $P/
(cd kernels/cuda && for k in ${KERNELS:-attention_dec}; do
	h=$(cat $k.cu $(LC_ALL=C ls *.cuh) | sha256sum | cut -d" " -f1)
	nvcc -arch=sm_90 -ptx -O3 -fmad=false -o /tmp/$k.ptx $k.cu || echo "nvcc $k failed"
	{ echo "// ember-sources-sha256: $h"; cat /tmp/$k.ptx; } >$P/$k.ptx
	cp $P/$k.ptx "$L/"
	nvcc -arch=sm_90 -cubin -O3 -fmad=false -Xptxas -v -o /tmp/$k.cubin $k.cu 2>&1 | grep -A3 "entry function" |
		grep -B2 "registers" | grep -o "entry function '[a-z_0-9]*'\|Used [0-9]* registers\|[0-9]* bytes spill stores" |
		paste - - - >"$L/$k.regs"
done)
grep "attention_dec" "$L/attention_dec.regs"
export EMBER_CUDA_PTX_DIR=$P
(cd inference/backend/cuda && timeout -s KILL 300 "$R/bin/dev/cuda.test" -test.v \
	-test.run 'TestDec|TestDecode|TestAttention|TestFusedAttention|TestLtPairs|TestLtTune|TestCublasMatMul|TestF16Copies|TestFused|TestBatchLtCalls' \
	>"$L/cuda.log" 2>&1
	echo "cuda rc $?" >>"$L/cuda.log") &
(cd inference/model/archs && timeout -s KILL 300 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA' >"$L/gold.log" 2>&1
	echo "goldens rc $?" >>"$L/gold.log"
	EMBER_CUDA_LT_PAIRS=1 timeout -s KILL 200 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA$' >>"$L/gold.log" 2>&1
	echo "goldens (pairs on) rc $?" >>"$L/gold.log"
	cd ../deepseek2 && timeout -s KILL 200 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' >"$L/ds2.log" 2>&1
	echo "deepseek2 rc $?" >>"$L/ds2.log") &
wait
grep -E "^(--- FAIL|ok|FAIL|PASS)|rc |panic" "$L/cuda.log" | head -30
grep -c "^--- PASS" "$L/cuda.log"
grep -E "rc |FAIL" "$L/gold.log" "$L/ds2.log" | head
b() { timeout -s KILL 100 "$E" bench -m /tmp/q4.gguf -backend cuda "$@" 2>&1 | grep '^| ' | tail -1; }
for i in 1 2; do
	echo "64 streams, default (dec 3 blocks): $(b -streams 64 -p 512 -n 128 | cut -d'|' -f6)"
	echo "64 streams, dec rings of 4 (2 blocks): $(EMBER_CUDA_DEC_STAGES=4 b -streams 64 -p 512 -n 128 | cut -d'|' -f6)"
	echo "64 streams, pairs:   $(EMBER_CUDA_LT_PAIRS=1 b -streams 64 -p 512 -n 128 | cut -d'|' -f6)"
	echo "64 streams, tuned:   $(EMBER_CUDA_LT_TUNE=1 b -streams 64 -p 512 -n 128 | cut -d'|' -f6)"
	echo "64 streams, both, K/V on copies: $(EMBER_CUDA_LT_PAIRS=1 EMBER_CUDA_LT_TUNE=1 EMBER_CUDA_F16_MIN_ELEMS=0 \
		b -streams 64 -p 512 -n 128 | cut -d'|' -f6)"
done
echo "tg128: $(b -p 0 -n 128 -r 2 | cut -d'|' -f8)"
echo "V2-Lite 64 streams, default: $(timeout -s KILL 100 "$E" bench -m /tmp/v2.gguf -backend cuda -streams 64 -p 512 \
	-n 128 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f6)"
echo "V2-Lite 64 streams, pairs and tuned: $(EMBER_CUDA_LT_PAIRS=1 EMBER_CUDA_LT_TUNE=1 timeout -s KILL 100 "$E" bench \
	-m /tmp/v2.gguf -backend cuda -streams 64 -p 512 -n 128 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f6)"
for v in "" EMBER_CUDA_LT_PAIRS=1; do
	echo "pp512 ${v:-default}: $(env $v "$E" bench -m /tmp/q4.gguf -backend cuda -p 512 -n 0 -r 3 2>&1 | grep pp512 | cut -d'|' -f8)"
done
EMBER_CUDA_LT_PAIRS=1 EMBER_CUDA_LT_TUNE=1 EMBER_CUDA_STATS=1 "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 \
	-n 128 2>&1 | grep -i "cuBLASLt\|tuned" | sort | uniq -c | sort -rn | head -20
# The step's kernels (build/profile-cuda.sh; ncu is on the H200 image).
AT=50 timeout -s KILL 150 build/profile-cuda.sh "$E" /tmp/q4.gguf "$L/s64" -streams 64 -p 512 -n 128 >/dev/null 2>&1
head -14 "$L/s64/summary.txt"
rm -f "$L/s64/kernels.csv"
