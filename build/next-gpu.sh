#!/bin/sh
# next-gpu.sh: session 25's GPU checks, for the next session's first call. The fusion,
# mat-vec, attention, conformance and graph tests, deepseek2's GPU tests and the CUDA
# goldens with EMBER_CUDA_CARVEOUT=44 (every kernel whose shared memory limit is not
# raised prefers a 44 per cent carveout; the raised ones keep the driver's: raiseSmem,
# written after the device time ran out); then 44 against the driver's choice (off),
# alternating: 8B Q8_0 and Q4_K_M tg128, DeepSeek-V2-Lite tg128 and 64 streams (which
# lost 15% with its big-tile kernels at 44 too), 8B 64 streams and pp512. If
# V2-Lite's 64 streams hold and Q8_0 keeps its ~3%, set defaultCarveout to 44
# (carveout.go). Last, a carveout sweep with the Q8_0 gain's kernels narrowed down
# (EMBER_CUDA_CARVEOUT_EXEMPT: the mat-vecs, the norms, the small kernels), and the
# mat-vecs with no shared memory (EMBER_CUDA_MV1_GLOBAL) under both carveouts, and
# Q4_K's batch-1 products at four blocks an SM (-DMV1_MINB=4).
# build/micro/carve.cu runs after the tests (the percentages' configurations).
# Carry bin/dev (ember, cuda.test, archs.test, deepseek2.test as .xz: build/dev-build.sh).
# ~14 minutes in all, so two calls: PART=1 (tests, carve.cu, the first round of A/B;
# ~8 minutes) and PART=2 (the second round, pp512, the sweep; ~6 minutes). PART=3
# (~5 minutes): build/wip/mmqw.patch's 16-warp mmq tiles, their bits and their times.
PART=${PART:-1}
set -u
[ $PART = 2 ] && MODELS="q4 q8"
[ $PART = 3 ] && MODELS="q4"
. build/gpu-setup.sh /tmp/next-gpu
export EMBER_CUDA_CARVEOUT=44
if [ $PART = 1 ] && [ -z "${SKIP_TESTS:-}" ]; then
(cd inference/backend/cuda && timeout -s KILL 280 "$R/bin/dev/cuda.test" -test.run 'TestFused|TestMatVec|Conformance$|TestMatMulSharedQ8_0|TestGraphReplay|TestBranch|TestDecodeAttention|TestLatentAttention|TestPrefillProducts' -test.v >"$L/tests.log" 2>&1; echo "cuda tests rc $?") &
(cd inference/model/deepseek2 && timeout -s KILL 280 "$R/bin/dev/deepseek2.test" >"$L/ds2.log" 2>&1; echo "deepseek2 tests rc $?") &
(cd inference/model/archs && timeout -s KILL 280 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA' >"$L/goldens.log" 2>&1; echo "goldens rc $?") &
fi
[ $PART = 1 ] && (cd build/micro && nvcc -arch=sm_90 -std=c++17 -O3 -o /tmp/carve carve.cu; echo "carve built rc $?") &
wait
if [ $PART = 1 ]; then
	grep -E "^--- FAIL|^ok|^PASS|^FAIL|panic" "$L"/*.log | head -30
	/tmp/carve  # alone on the GPU: the carveouts' configurations and a change's cost
fi
for r in $(echo $PART | grep -x '[12]'); do
	for c in 44 off; do
		export EMBER_CUDA_CARVEOUT=$c
		echo "carve=$c 8B q8_0 tg128 $(q "$E" bench -backend cuda -m /tmp/q8.gguf -p 0 -n 128 -r 3)"
		echo "carve=$c 8B q4_k_m tg128 $(q "$E" bench -backend cuda -m /tmp/q4.gguf -p 0 -n 128 -r 3)"
		echo "carve=$c v2 tg128 $(q "$E" bench -backend cuda -m /tmp/v2.gguf -p 0 -n 128 -r 3)"
		echo "carve=$c v2 64 streams $(s "$E" bench -m /tmp/v2.gguf -backend cuda -streams 64 -p 512 -n 128)"
		echo "carve=$c 8B 64 streams $(s "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128)"
	done
done
[ $PART = 1 ] && exit 0
if [ $PART = 3 ]; then
	# build/wip/mmqw.patch: mmq's 64-wide tiles in 16 warps (EMBER_CUDA_MMQ_WARPS=16).
	# Its PTX (with the hash line, to commit if it wins) comes back in $OUT/mmqw.
	P=/tmp/mmqw; rm -rf $P; mkdir -p $P; cp -r kernels/cuda/. $P/
	(cd $P && patch -p3 <"$R/build/wip/mmqw.patch" >/dev/null && nvcc -arch=sm_90 -ptx -O3 -fmad=false -o /tmp/mmqw.ptx mmq.cu 2>/dev/null &&
		{ echo "// ember-sources-sha256: $(cat mmq.cu $(LC_ALL=C ls *.cuh) | sha256sum | cut -d' ' -f1)"; cat /tmp/mmqw.ptx; } >mmq.ptx &&
		mkdir -p "$L/mmqw" && cp mmq.ptx "$L/mmqw/"; echo "mmqw ptx rc $?")
	(cd $P && nvcc -arch=sm_90 -O3 -fmad=false -cubin -Xptxas -v -o /dev/null mmq.cu 2>&1 | grep -A3 "entry function 'mmqw_q4_k'\|entry function 'mmqw_q6_k'\|entry function 'mmq_q4_k'" | grep 'entry\|Used\|spill')
	export EMBER_CUDA_PTX_DIR=$P EMBER_CUDA_CARVEOUT=off
	(cd inference/backend/cuda && EMBER_CUDA_MMQ_WARPS=16 timeout -s KILL 200 "$R/bin/dev/cuda.test" -test.run 'TestMatMulTilesMMQ|TestConformance$' >"$L/mmqw-tests.log" 2>&1; echo "mmqw tests rc $?"; tail -3 "$L/mmqw-tests.log")
	for w in 8 16; do
		(cd inference/backend/cuda && EMBER_CUDA_MMQ_WARPS=$w EMBER_CUDA_BENCH=1 EMBER_CUDA_BENCH_ROWS=32,64 timeout -s KILL 150 "$R/bin/dev/cuda.test" -test.run TestPrefillProducts -test.v 2>&1 | grep -E 'rows:' | sed "s/^/warps=$w /")
	done
	for w in 8 16 8 16; do
		echo "8B 64 streams, no f16 copies, mmq warps=$w $(EMBER_CUDA_MMQ_WARPS=$w EMBER_CUDA_F16_COPIES=off s "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128)"
	done
	echo "8B 64 streams, default $(s "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128)"
	exit 0
fi
export EMBER_CUDA_CARVEOUT=44
echo "carve=44 8B pp512 $(p "$E" bench -backend cuda -m /tmp/q4.gguf -p 512 -n 0 -r 3)"
echo "carve=off 8B pp512 $(EMBER_CUDA_CARVEOUT=off p "$E" bench -backend cuda -m /tmp/q4.gguf -p 512 -n 0 -r 3)"
# Which kernels carry Q8_0's gain: each family left at the driver's choice in turn.
for x in mmv add_rms_norm rope2_set,swiglu none; do
	echo "carve=44 exempt=$x 8B q8_0 tg128 $(EMBER_CUDA_CARVEOUT_EXEMPT=$x q "$E" bench -backend cuda -m /tmp/q8.gguf -p 0 -n 128 -r 3)"
done
# The products' activation row from global memory (no shared memory in the mat-vecs).
for c in off 44; do
	for m in q8 q4; do
		echo "carve=$c mv1 global 8B $m tg128 $(EMBER_CUDA_CARVEOUT=$c EMBER_CUDA_MV1_GLOBAL=1 q "$E" bench -backend cuda -m /tmp/$m.gguf -p 0 -n 128 -r 3)"
		echo "carve=$c mv1 smem   8B $m tg128 $(EMBER_CUDA_CARVEOUT=$c q "$E" bench -backend cuda -m /tmp/$m.gguf -p 0 -n 128 -r 3)"
	done
done
# Q4_K's batch-1 products at four blocks an SM (-DMV1_MINB=4: registers capped at 128;
# nvcc 11.8 spills 12 bytes of mmv_q4_k_1 and 84 of mmv_multi), driver's carveout.
# build/wip/mv1-minb.patch adds MV1_BOUNDS to matmul.cu (its default PTX is unchanged).
d=/tmp/ptx-minb4; rm -rf $d; mkdir -p $d; cp -r kernels/cuda/. $d/
(cd $d && patch -p3 <"$R/build/wip/mv1-minb.patch" >/dev/null && nvcc -arch=sm_90 -ptx -O3 -fmad=false -DMV1_MINB=4 -o matmul.ptx matmul.cu 2>/dev/null; echo "ptx MV1_MINB=4 rc $?")
(cd $d && nvcc -arch=sm_90 -O3 -fmad=false -DMV1_MINB=4 -cubin -Xptxas -v -o /dev/null matmul.cu 2>&1 | grep -A3 "entry function 'mmv_q4_k_1'\|entry function 'mmv_multi'" | grep 'entry\|Used\|spill')
for r in 1 2; do
	echo "minb=4 8B q4 tg128 $(EMBER_CUDA_CARVEOUT=off EMBER_CUDA_PTX_DIR=$d q "$E" bench -backend cuda -m /tmp/q4.gguf -p 0 -n 128 -r 3)"
	echo "minb=- 8B q4 tg128 $(EMBER_CUDA_CARVEOUT=off q "$E" bench -backend cuda -m /tmp/q4.gguf -p 0 -n 128 -r 3)"
done
echo "greedy q8 (a0f79f57c7154598541d0a928c172ed5 before) $("$E" run -backend cuda -m /tmp/q8.gguf -p "The quick brown fox" -n 48 -temp 0 2>/dev/null | md5sum)"
