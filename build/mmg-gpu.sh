#!/bin/sh
# mmg-gpu.sh (session 27): kernels/cuda/mmg.cu's PTX (sm_90a, with its hash line) into
# $OUT/mmg.ptx; TestMMG and the kernel-name test on it; Llama-3.1-8B Q4_K_M and
# DeepSeek-V2-Lite at 64 streams with mmg (EMBER_CUDA_MMG=48) and without; the
# CUDA goldens. ~6 minutes. Carry bin/dev (build/dev-build.sh).
set -u
MODELS="q4 v2"
. build/gpu-setup.sh /tmp/mmg-gpu
P=/tmp/mmgptx
rm -rf $P && mkdir -p $P && cp kernels/cuda/*.ptx kernels/cuda/*.cu kernels/cuda/*.cuh $P/
(cd $P && nvcc -arch=sm_90a -ptx -O3 -fmad=false -o /tmp/mmg.ptx mmg.cu &&
	{ echo "// ember-sources-sha256: $(cat mmg.cu $(LC_ALL=C ls *.cuh) | sha256sum | cut -d' ' -f1)"; cat /tmp/mmg.ptx; } >mmg.ptx &&
	cp mmg.ptx "$L/" && head -c 300 mmg.ptx | grep -a target)
(cd $P && nvcc -arch=sm_90a -cubin -O3 -fmad=false -Xptxas -v -o /dev/null mmg.cu 2>&1 | grep -A2 "mmg_q4_k" | grep -E "Used|spill")
export EMBER_CUDA_PTX_DIR=$P
(cd inference/backend/cuda && timeout -s KILL 200 "$R/bin/dev/cuda.test" -test.run 'TestMMG|TestKernelNames' -test.v 2>&1 | grep -E "^(--- |ok|PASS|FAIL)|panic|mmg" | head -20)
wait
(cd inference/model/archs && timeout -s KILL 200 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA' >"$L/goldens.log" 2>&1; echo "goldens rc $?") &
for r in 1 2; do
	echo "8B 64 streams, mmg $(EMBER_CUDA_MMG=48 s "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128)"
	echo "8B 64 streams, off $(s "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128)"
done
echo "v2 64 streams, mmg $(EMBER_CUDA_MMG=48 s "$E" bench -m /tmp/v2.gguf -backend cuda -streams 64 -p 512 -n 128)"
echo "v2 64 streams, off $(s "$E" bench -m /tmp/v2.gguf -backend cuda -streams 64 -p 512 -n 128)"
wait
grep -E "^--- FAIL|^ok|^PASS|^FAIL|panic" "$L/goldens.log" | head
