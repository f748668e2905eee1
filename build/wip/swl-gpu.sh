#!/bin/sh
# swl-gpu.sh: the device call for build/wip/swiglu-layout.patch. Here first:
#   sh build/dev-build.sh && mkdir -p bin/dev0 && cp bin/dev/ember.xz bin/dev0/   (HEAD's binary)
#   git apply build/wip/swiglu-layout.patch && sh build/dev-build.sh              (the patched one)
# then carry bin/dev and bin/dev0. On the GPU machine: quant.ptx made from the patched
# tree into $OUT, the fusion, mmg and fused tests on it, then 8B Q4_K_M at 64 streams on
# HEAD's binary (its embedded PTX) against the patched one (the new quant.ptx), ROUNDS
# rounds alternating.
set -u
export MODELS=q4
. build/gpu-setup.sh "${OUT:-/tmp/swl-gpu}"
xz -d -f bin/dev0/ember.xz && chmod +x bin/dev0/ember
D=/tmp/pv-swl
sh build/ptx-copy.sh $D quant && cp $D/quant.ptx "$L/quant.ptx"
wait
export EMBER_CUDA_PTX_DIR=$D
(cd inference/backend/cuda && timeout -s KILL 300 "$R/bin/dev/cuda.test" -test.run 'TestFusedMMG|TestFused|TestMMG|TestConformance' 2>&1 | tail -6)
S="bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128"
head0() { (unset EMBER_CUDA_PTX_DIR && s "$R/bin/dev0/ember" $S); } # HEAD's binary on its own PTX
for r in $(seq "${ROUNDS:-3}"); do
	echo "round $r: patched $(s "$E" $S) | HEAD $(head0)"
done
