#!/bin/sh
# att-gpu.sh: attention_dec.cu as it is in the tree against the embedded PTX, on the GPU
# machine from the repository root with bin/dev carried (build/dev-build.sh):
# attention_dec.cu compiled into a copy of kernels/cuda ($OUT/attention_dec.ptx, to
# commit), 8B Q4_K_M at 64 streams and tg128 on the embedded PTX and on the copy
# (EMBER_CUDA_PTX_DIR) in turn, ROUNDS rounds (default 2), then the attention tests,
# the CUDA goldens and deepseek2's CUDA tests on the copy.
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/att-gpu}"
K=/tmp/kd && rm -rf $K && mkdir -p $K && cp kernels/cuda/*.cu kernels/cuda/*.cuh kernels/cuda/*.ptx $K/
(cd $K && nvcc -arch=sm_90 -ptx -O3 -fmad=false -o /tmp/att.raw attention_dec.cu &&
	{ echo "// ember-sources-sha256: $(cat attention_dec.cu $(LC_ALL=C ls *.cuh) | sha256sum | cut -d' ' -f1)"; cat /tmp/att.raw; } >attention_dec.ptx &&
	cp attention_dec.ptx "$L/") &
wait
for r in $(seq "${ROUNDS:-2}"); do
	for v in old new; do
		if [ $v = old ]; then unset EMBER_CUDA_PTX_DIR; else export EMBER_CUDA_PTX_DIR=$K; fi
		echo "round $r $v: 64 streams $(s "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128) tg128 $(q "$E" bench -m /tmp/q4.gguf -backend cuda -p 0 -n 128)"
	done
done
export EMBER_CUDA_PTX_DIR=$K
(cd inference/backend/cuda && timeout -s KILL 240 "$R/bin/dev/cuda.test" -test.run 'Attention|Conformance' 2>&1 | tail -15) &
(cd inference/model/archs && timeout -s KILL 240 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA' 2>&1 | tail -5) &
(cd inference/model/deepseek2 && timeout -s KILL 240 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -5) &
wait
