#!/bin/sh
# s35-call3.sh: moe_topk with the logits in registers and the selected weights written
# once (moe.cu); every module's PTX made; TestMoERouting (bits against routeRef, fused
# and unfused) and the other MoE/latent tests on it; the CUDA goldens (archs.test -run
# CUDA: llama, qwen2, deepseek2 against llama.cpp's logits) on it; V2-Lite tg128 on it
# (D) against call 2's committed PTX (C: moe.ptx from HEAD), alternating. bin/dev built
# with TESTS="cuda archs". ~4 minutes.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s35c3}"
D=/tmp/pv C=/tmp/pc
ptx_all $D
rm -rf $C && cp -r $D $C && cp kernels/cuda/moe.ptx $C/ # the tree's committed (HEAD) moe.ptx
export EMBER_CUDA_PTX_DIR=$D
tgroup 0 'TestMoERouting|TestMMQQueueGroupedMoE|TestLatentAttention|TestBranchedGraph' 150
(cd inference/model/archs && timeout -s KILL 200 "$R/bin/dev/archs.test" -test.run 'CUDA' 2>&1 | tail -4) &
wait
el tests done
B="bench -backend cuda -p 0 -n 128 -r 3"
for r in 1 2 3; do
	el "round $r V2-Lite: topk $(q "$E" $B -m /tmp/v2.gguf) | before $(EMBER_CUDA_PTX_DIR=$C q "$E" $B -m /tmp/v2.gguf)"
done
