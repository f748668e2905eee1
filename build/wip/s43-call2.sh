#!/bin/sh
# s43-call2.sh (written in session 42, not run): build/wip/idsq.patch and q4x.patch on
# top of q5pack-idwq.patch (in that order):
#   idsq: mmv_idsq_q5_0 / mmv_idsq_q8_0, a mixture of experts' down products whose
#     blocks compute their pair's SwiGLU and Q8_0 rounding after the wait (swiglu_q8's
#     operations, mv1_ready's QX 2), so the swiglu_q8 launch before each MoE layer's
#     routed downs goes (26 a V2-Lite step); EMBER_CUDA_NO_IDSQ=1 turns it off;
#   q4x: mmv_q4_k_1x, a Q4_K product of one F32 row that no launch rounded, each block
#     rounding it to Q8_K itself (quant_q8_k's q8k_quant_warp, quants swizzled as
#     mv1_stage stores them; QX 3), so the quant_q8_k before V2-Lite's attn_output goes
#     (27 a step); EMBER_CUDA_NO_Q4X=1 turns it off. 8B decode has no such launch.
# Makes every module's PTX ($OUT/ptx.tar.xz), runs the routing, MoE and queue tests,
# deepseek2's CUDA tests and the deepseek2 goldens on it, then V2-Lite tg128 with and
# without, three rounds, and one step's launch count.
#
# Here, before the call:
#   for p in q5pack-idwq idsq q4x; do git apply build/wip/$p.patch; done
#   TESTS="cuda archs deepseek2" sh build/dev-build.sh
#   for p in q4x idsq q5pack-idwq; do git apply -R build/wip/$p.patch; done
#   move testdata/vocab, testdata/tokenizers and kernels/cuda/*.ptx out of the tree;
#   carry bin/dev; restore after.
set -u
for p in q5pack-idwq idsq q4x; do
	{ git apply build/wip/$p.patch || patch -p1 -s <build/wip/$p.patch; } || { echo "$p.patch does not apply"; exit 1; }
done
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s43c2}"
ptx_all /tmp/px # every module (gpu-setup.sh): $OUT/ptx.tar.xz
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMoERouting|TestMMVQueue|SwiGLUQ8|IDW|Q4X|AttentionChoice|Branch|FuseQueue|Conformance/MatMul/Q4_K' 300
model_tests 300
wait
el "tests done"
t() { q env $1 $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/v2.gguf; }
for r in 1 2 3; do
	el "v2 tg128: both $(t "EMBER_CUDA_PTX_DIR=/tmp/px") no idsq $(t "EMBER_CUDA_NO_IDSQ=1") no q4x $(t "EMBER_CUDA_NO_Q4X=1") neither $(t "EMBER_CUDA_NO_IDSQ=1 EMBER_CUDA_NO_Q4X=1")"
done
el "8B tg128 (no change expected): $(q $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/q4.gguf) / $(q env EMBER_CUDA_NO_Q4X=1 $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/q4.gguf)"
el "launches a step: $(EMBER_CUDA_STATS=1 $E bench -backend cuda -p 0 -n 8 -r 1 -m /tmp/v2.gguf 2>&1 | grep -o 'last batch of [0-9+]* kernels, [0-9]*')"
