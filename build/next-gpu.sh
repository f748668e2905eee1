#!/bin/sh
# next-gpu.sh: mmg on the GPU machine, from the repository root with bin/dev carried
# (build/dev-build.sh): build/micro/mmgb.cu on mmg.cu as it is (single weights with K
# splits, and gate and up pairs, against cuBLAS's f16 GEMM), mmg.ptx made again into a
# copy of kernels/cuda ($OUT/mmg.ptx, to commit), TestMMG on it, then 8B Q4_K_M at 64
# streams with EMBER_CUDA_MMG as by default and as each of MODES, ROUNDS rounds (default 2).
# VARIANTS: more micro builds as name:-DFLAG,-DFLAG (mmg.cu's MG_GROUPS, MG_STAGES,
# MG_MINB).
# MODES: the 64-stream runs' $EMBER_CUDA_MMG settings besides the default (default
# "off"; with build/wip/mmg-cluster.patch applied also "pairs": gate and up pairs only).
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/next-gpu}"
K=/tmp/kc && rm -rf $K && mkdir -p $K && cp kernels/cuda/*.cu kernels/cuda/*.cuh kernels/cuda/*.ptx $K/
(sh build/ptx-one.sh $K mmg && cp $K/mmg.ptx "$L/") &
V="base:-DMG_GROUPS=4 ${VARIANTS:-}"
for v in $V; do
	n=${v%%:*} f=$(echo "${v#*:}" | tr , ' ')
	(cd build/micro && nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -Xptxas -v $f -o /tmp/mmgb-$n mmgb.cu -lcublas >/tmp/mmgb-$n.log 2>&1) &
done
wait
for v in $V; do
	n=${v%%:*}
	echo "== $n: $(grep -A3 "mmg_q4_k" /tmp/mmgb-$n.log | grep -E "Used|spill" | tr '\n' ' ')"
	grep -iE "error|wgmma" /tmp/mmgb-$n.log | head -3
	timeout 60 /tmp/mmgb-$n
done
export EMBER_CUDA_PTX_DIR=$K
(cd inference/backend/cuda && timeout -s KILL 100 "$R/bin/dev/cuda.test" -test.run 'TestMMG|TestMGTakesOne|TestKernelNamesExist' -test.v 2>&1 | grep -E "^(--- |ok|PASS|FAIL)|panic|_test.go" | head -12)
for r in $(seq "${ROUNDS:-2}"); do
	echo "8B 64 streams, default $(s "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128)"
	for m in ${MODES:-off}; do
		echo "8B 64 streams, $m $(EMBER_CUDA_MMG=$m s "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128)"
	done
done
