#!/bin/sh
# lay-gpu.sh: session 31's call for the norm writing mmg's activation layout itself
# (fuseHalf with stride -1; EMBER_CUDA_NO_LAY_FUSE=1 turns it off): quant.ptx made from
# the tree (into $OUT, to commit), then 8B Q4_K_M at 64 streams with and without the
# fusion, ROUNDS rounds alternating (the embedded quant.ptx is older than mmg.go's use of
# it, so every run loads the tree's PTX), then which small kernel of a 64-stream step,
# left out (EMBER_CUDA_SKIP: wrong results, the chain's time without it), shortens it,
# then the tests of the fusion and of what it touches, and the CUDA goldens.
# Carry bin/dev (build/dev-build.sh).
set -u
export MODELS=q4
. build/gpu-setup.sh "${OUT:-/tmp/lay-gpu}"
D=/tmp/pv-tree
sh build/ptx-copy.sh $D quant && cp $D/quant.ptx "$L/" || exit 1
wait
export EMBER_CUDA_PTX_DIR=$D
S="$E bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128"
for r in $(seq "${ROUNDS:-3}"); do
	echo "round $r: fused $(s $S) | not fused $(EMBER_CUDA_NO_LAY_FUSE=1 s $S)"
done
for k in ${SKIPS-add_rms_norm_q8_k swiglu_q8_k rope2_set act_f16 mmg_xl attention_dec128}; do
	echo "without $k: $(EMBER_CUDA_SKIP=$k s $S)"
done
(cd inference/backend/cuda && timeout -s KILL 300 "$R/bin/dev/cuda.test" -test.run 'TestFusedMMGLayout|TestFusedQ8KHalf|TestFusedAddRMSNorm|TestMMG|TestMMF|TestConformance|TestFusedDecoderLayers' 2>&1 | tail -15) &
(cd inference/model/archs && timeout -s KILL 300 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA' 2>&1 | tail -5) &
wait
