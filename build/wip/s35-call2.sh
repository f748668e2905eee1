#!/bin/sh
# s35-call2.sh: ops.ptx made again (mla_kv staged, pdl_defer; rope2_set as before) with
# every other module, the RoPE/SwiGLU/fused/latent/conformance tests and deepseek2's CUDA
# tests on it; V2-Lite tg128 on it (D) against the session's starting PTX of ops, moe and
# quant (H: build/wip/s35-head/*.ptx.xz over D), alternating; 8B Q4_K_M tg128 with
# rope2_set's heads a block (EMBER_CUDA_ROPE_HEADS) 8, 4, 2, 1. bin/dev built with
# TESTS="cuda deepseek2". ~4-5 minutes.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s35c2}"
D=/tmp/pv H=/tmp/ph
ptx_all $D
rm -rf $H && cp -r $D $H && for f in build/wip/s35-head/*.xz; do xz -dc "$f" >"$H/$(basename "$f" .xz)"; done
export EMBER_CUDA_PTX_DIR=$D
tgroup 0 'TestFusedRoPE|TestFusedSetRows|TestFusedSwiGLU|TestFusedDecoderLayers|TestBranchedGraph|TestLatentAttention|TestMoE' 150
tgroup 1 'TestConformance$|TestKernelNamesExist' 150
(cd inference/model/deepseek2 && timeout -s KILL 150 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3) &
wait
el tests done
B="bench -backend cuda -p 0 -n 128 -r 3"
for r in 1 2 3; do
	el "round $r V2-Lite: new $(q "$E" $B -m /tmp/v2.gguf) | start $(EMBER_CUDA_PTX_DIR=$H q "$E" $B -m /tmp/v2.gguf)"
done
for r in 1 2; do
	o="round $r 8B Q4_K_M, rope heads:"
	for h in 8 4 2 1; do o="$o $h: $(EMBER_CUDA_ROPE_HEADS=$h q "$E" $B -m /tmp/q4.gguf)"; done
	el "$o"
done
el "8B at start PTX: $(EMBER_CUDA_PTX_DIR=$H q "$E" $B -m /tmp/q4.gguf)"
