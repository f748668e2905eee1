#!/bin/sh
# next-gpu.sh: session 26's mmv_id check. Q4_K mmv_id launches past one wave take
# several row blocks a block (mv1_q4_k_rep; EMBER_CUDA_ID_REP) and a branch's main run
# takes the fork's rounding (pinnedAct in branch.go: no quant_q8_k before
# DeepSeek-V2's routed experts). matmul.cu changed: its PTX is made here (nvcc) and
# comes back with its hash line in $OUT/ptx; the tests and the benches run on it
# (EMBER_CUDA_PTX_DIR). The base: EMBER_CUDA_NO_PIN=1 EMBER_CUDA_ID_REP=1.
# ~6 minutes. Carry bin/dev (build/dev-build.sh).
set -u
MODELS="v2"
. build/gpu-setup.sh /tmp/next-gpu
P=/tmp/ptx-new; rm -rf $P; mkdir -p $P; cp kernels/cuda/*.cu kernels/cuda/*.cuh $P/
# Every module (mv1.cuh is in every hash line; matmul.cu and mvs.cu include it), in
# parallel, as build/gen-ptx.sh makes them; all come back in $OUT/ptx.
mkdir -p "$L/ptx"
for cu in $P/*.cu; do
	m=$(basename "$cu" .cu)
	(cd $P && nvcc -arch=sm_90 -ptx -O3 -fmad=false -o "/tmp/$m.raw.ptx" "$m.cu" 2>/dev/null &&
		{ echo "// ember-sources-sha256: $(cat "$m.cu" $(LC_ALL=C ls *.cuh) | sha256sum | cut -d' ' -f1)"; cat "/tmp/$m.raw.ptx"; } >"$m.ptx" &&
		cp "$m.ptx" "$L/ptx/" || echo "$m ptx failed") &
done
wait
ls $P/*.ptx | wc -l
(cd $P && nvcc -arch=sm_90 -O3 -fmad=false -cubin -Xptxas -v -o /dev/null matmul.cu 2>&1 | grep -A3 "entry function 'mmv_id_q4_k'" | grep 'Used\|spill')
export EMBER_CUDA_PTX_DIR=$P
wait
(cd inference/backend/cuda && timeout -s KILL 150 "$R/bin/dev/cuda.test" -test.run 'TestBranchedGraph|Conformance$|TestMatVecBatch1' >"$L/tests.log" 2>&1; echo "cuda tests rc $?") &
(cd inference/backend/cuda && EMBER_CUDA_ID_REP=3 timeout -s KILL 150 "$R/bin/dev/cuda.test" -test.run 'TestConformance$' >"$L/tests-rep3.log" 2>&1; echo "cuda tests rep 3 rc $?") &
(cd inference/model/deepseek2 && timeout -s KILL 150 "$R/bin/dev/deepseek2.test" >"$L/ds2.log" 2>&1; echo "deepseek2 tests rc $?"
 EMBER_CUDA_ID_REP=2 timeout -s KILL 60 "$R/bin/dev/deepseek2.test" >"$L/ds2-rep2.log" 2>&1; echo "deepseek2 tests rep 2 rc $?") &
(cd inference/model/archs && timeout -s KILL 150 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA' >"$L/goldens.log" 2>&1; echo "goldens rc $?") &
wait
grep -E "^--- FAIL|^ok|^PASS|^FAIL|panic" "$L"/*.log | head -30
for r in 1 2; do
	echo "base v2 tg128 $(EMBER_CUDA_NO_PIN=1 EMBER_CUDA_ID_REP=1 q "$E" bench -backend cuda -m /tmp/v2.gguf -p 0 -n 128 -r 3)"
	[ $r = 1 ] && echo "pin, rep 1 v2 tg128 $(EMBER_CUDA_ID_REP=1 q "$E" bench -backend cuda -m /tmp/v2.gguf -p 0 -n 128 -r 3)"
	echo "pin, rep auto v2 tg128 $(q "$E" bench -backend cuda -m /tmp/v2.gguf -p 0 -n 128 -r 3)"
done
echo "rep 2 v2 tg128 $(EMBER_CUDA_ID_REP=2 q "$E" bench -backend cuda -m /tmp/v2.gguf -p 0 -n 128 -r 3)"
echo "greedy v2 base $(EMBER_CUDA_NO_PIN=1 EMBER_CUDA_ID_REP=1 "$E" run -backend cuda -m /tmp/v2.gguf -p "The quick brown fox" -n 32 -temp 0 2>/dev/null | md5sum)"
echo "greedy v2 new  $("$E" run -backend cuda -m /tmp/v2.gguf -p "The quick brown fox" -n 32 -temp 0 2>/dev/null | md5sum)"
echo "new v2 64 streams $(s "$E" bench -m /tmp/v2.gguf -backend cuda -streams 64 -p 512 -n 128)"
