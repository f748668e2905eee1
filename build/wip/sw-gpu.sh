#!/bin/sh
# sw-gpu.sh: the device call for build/wip/mmg-swiglu.patch (SwiGLU inside mmg's gate/up
# pair, mmg_q4_k_sw; NOTES session 31). First, here: git apply build/wip/mmg-swiglu.patch
# && sh build/dev-build.sh (it warns that the PTX is stale: common.cuh changes). Then on
# the GPU machine, carrying bin/dev: every module's PTX made from the tree into $OUT
# (ptx.tgz: all bodies but mmg's and quant's should be the committed ones), the fusion's
# tests and mmg's on it, then 8B Q4_K_M at 64 streams with and without the fusion
# (EMBER_CUDA_NO_SWIGLU_FUSE=1), ROUNDS rounds alternating.
set -u
export MODELS=q4
. build/gpu-setup.sh "${OUT:-/tmp/sw-gpu}"
D=/tmp/pv-sw
sh build/ptx-copy.sh $D
(cd $D && tar czf "$L/ptx.tgz" *.ptx)
wait
export EMBER_CUDA_PTX_DIR=$D
(cd inference/backend/cuda && timeout -s KILL 200 "$R/bin/dev/cuda.test" -test.run 'TestFusedMMGSwiGLU|TestFusedMMGLayout|TestFusedQ8KHalf|TestMMG' 2>&1 | tail -8)
S="$E bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128"
for r in $(seq "${ROUNDS:-3}"); do
	echo "round $r: fused $(s $S) | not fused $(EMBER_CUDA_NO_SWIGLU_FUSE=1 s $S)"
done
