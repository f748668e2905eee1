#!/bin/sh
# next-gpu.sh: session 18's second GPU call: Q4_0 and Q5_0 batch-1 products on mv1
# (mv1_q5_0; DeepSeek-V2-Lite's Q5_0 down experts ran on the generic kernel at ~0.5
# TB/s): the PTX regenerated here (brought back in $OUT/ptx.tgz), the products' tests,
# the goldens and deepseek2's, V2-Lite's step profile and tg128; and where the device
# waits for the host (EMBER_CUDA_STATS' event clock) in decode and serving.
# Where Go is: build/dev-build.sh (bin/dev). On the GPU:
#   sh build/next-gpu.sh   (carry bin/dev; give the call 600 s)
set -u
R=$PWD
for f in bin/dev/*.xz; do [ -e "$f" ] && xz -d -f "$f"; done
chmod +x bin/dev/*
E=$R/bin/dev/ember L=${OUT:-/tmp/next-gpu}
mkdir -p "$L"
[ -f /tmp/v2.gguf ] || $E synth /tmp/v2.gguf -preset deepseek-v2-lite -ftype q4_k_m >/dev/null 2>&1 &
[ -f /tmp/q4.gguf ] || $E synth /tmp/q4.gguf -preset llama3.1-8b -ftype q4_k_m >/dev/null 2>&1 &
# the PTX of every module (mv1.cuh changed: every hash), compiled side by side
P=$R/kernels/cuda
(cd $P && for cu in *.cu; do (m=${cu%.cu}; nvcc -arch=sm_90 -ptx -O3 -fmad=false -o /tmp/$m.ptx $cu &&
	h=$(cat $cu $(LC_ALL=C ls *.cuh) | sha256sum | cut -d" " -f1) && { echo "// ember-sources-sha256: $h"; cat /tmp/$m.ptx; } >$m.ptx) & done; wait)
(cd $P && tar czf $L/ptx.tgz *.ptx)
export EMBER_CUDA_PTX_DIR=$P
C=inference/backend/cuda T=$R/bin/dev/cuda.test
g() { # name dir limit binary args...
	n=$1 d=$2 l=$3
	shift 3
	(cd "$d" && timeout -s KILL "$l" "$@" >"$L/$n.log" 2>&1; echo "$n rc $?" >>"$L/$n.log") &
}
g products $C 280 "$T" -test.run 'MatVec|MatMul|MMQ|PDL|Embedded|KernelNames|TopK|ArgMax' -test.skip 'TestCublasOutOfMemoryFallsBack|TestMatVecBandwidth'
g conf $C 280 "$T" -test.run 'Conformance$|Fused|Latent'
g goldens inference/model/archs 280 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA'
g deepseek2 inference/model/deepseek2 280 "$R/bin/dev/deepseek2.test" -test.run 'CUDA'
wait
for f in "$L"/*.log; do
	tail -1 "$f"
	grep -E "^--- FAIL|_test.go:[0-9]+:" "$f" | head -8
done
b() { timeout -s KILL 90 "$E" bench -backend cuda "$@" 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f6-8; }
echo "V2 tg128: $(b -m /tmp/v2.gguf -p 0 -n 128 -r 3) / $(b -m /tmp/v2.gguf -p 0 -n 128 -r 3)"
Pr=$L/prof
timeout -s KILL 120 sh build/profile-cuda.sh $E /tmp/v2.gguf $Pr/v2 -p 0 -n 32 -r 1 | head -12
s() { EMBER_CUDA_STATS=1 timeout -s KILL 120 "$E" bench -backend cuda "$@" 2>&1 | grep -E '^\| |cuda stats|device \(events' | tail -3; }
echo "--- 8B tg128 stats"; s -m /tmp/q4.gguf -p 0 -n 128 -r 1
echo "--- V2 tg128 stats"; s -m /tmp/v2.gguf -p 0 -n 128 -r 1
echo "--- 8B 64 streams stats"; s -m /tmp/q4.gguf -streams 64 -p 512 -n 128
echo "8B 64 streams: $(b -m /tmp/q4.gguf -streams 64 -p 512 -n 128)"
echo "V2 64 streams: $(b -m /tmp/v2.gguf -streams 64 -p 512 -n 128)"
(cd $L && tar czf logs.tgz *.log prof && rm -rf *.log prof)
