#!/bin/sh
# ops-stage-gpu.sh: the device call for build/wip/ops-stage.patch (applied to the tree
# carried; bin/dev built at HEAD with TESTS="cuda deepseek2": deepseek2.test holds the
# bit tests of moe_sum_add, swiglu_q8 and mla_kv (TestCUDALatentKV); the three test
# binaries together pass the carry limit, so the goldens (archs.test) wait for a later
# call). Every PTX made here into $OUT/ptx.tar.xz (only ops.ptx, moe.ptx and quant.ptx
# differ from HEAD's); the RoPE, cache-write, SwiGLU, fused-layer, graph,
# latent-attention and conformance tests and deepseek2's CUDA tests on it; then 8B
# Q4_K_M and V2-Lite tg128 on it against HEAD's embedded PTX, alternating, and 8B at 64
# streams once each. ~5 minutes.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/ops-stage}"
D=/tmp/pv
ptx_all $D
export EMBER_CUDA_PTX_DIR=$D
tgroup 0 'TestFusedRoPE|TestFusedSetRows|TestFusedSwiGLU|TestFusedDecoderLayers|TestBranchedGraph|TestLatentAttention' 150
tgroup 1 'TestConformance$' 150
tgroup 2 'TestDecodeAttention|TestFusedAttentionQ8K' 170
(cd inference/model/deepseek2 && timeout -s KILL 150 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3) &
wait
el tests done
B="bench -backend cuda -p 0 -n 128 -r 3"
atHead() { (unset EMBER_CUDA_PTX_DIR && q "$E" "$@"); }
for r in 1 2 3; do
	el "round $r 8B Q4_K_M: staged $(q "$E" $B -m /tmp/q4.gguf) | HEAD $(atHead $B -m /tmp/q4.gguf)"
done
for r in 1 2; do
	el "round $r V2-Lite: staged $(q "$E" $B -m /tmp/v2.gguf) | HEAD $(atHead $B -m /tmp/v2.gguf)"
done
S="bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128"
el "8B 64 streams: staged $(s "$E" $S) | HEAD $( (unset EMBER_CUDA_PTX_DIR && s "$E" $S) )"
