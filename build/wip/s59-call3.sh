#!/bin/sh
# s59-call3.sh: the expert prefetch hints (prefetch.go, moe.cu's moe_predict and
# moe_prefetch): every module's PTX made here (moe.ptx returned), the MoE, branch,
# graph and kernel tests, the goldens and deepseek2's CUDA tests with the prefetch on
# (EMBER_CUDA_EXPERT_PF=7: gate/up/down, evict_last; results must not change), then a
# rotated V2-Lite tg128 sweep over off / 1 (gate, up) / 3 (and downs) / 5 / 7
# (evict_last), and one timeline with it on. Local: bin/dev (TESTS="cuda archs
# deepseek2"), the usual held-out files.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s59c3}"
sh build/ptx-copy.sh /tmp/px || el "PTX FAILED"
cp /tmp/px/moe.ptx "$L/moe.ptx"
(sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED") &
wait
el "ptx made"
export EMBER_CUDA_PTX_DIR=/tmp/px EMBER_CUDA_EXPERT_PF=7
tgroup 0 'MoE|Route|TopK|Branch|Graph|EmbeddedKernelsWait|KernelNames|Prefetch' 240
model_tests 240
wait
unset EMBER_CUDA_EXPERT_PF
N="$E"
sweep 5 v2 "$N" "EMBER_CUDA_EXPERT_PF=1 $N" "EMBER_CUDA_EXPERT_PF=3 $N" "EMBER_CUDA_EXPERT_PF=5 $N" "EMBER_CUDA_EXPERT_PF=7 $N"
unset EMBER_CUDA_PTX_DIR
for pf in 0 1; do
	EMBER_CUDA_EXPERT_PF=$pf EMBER_CUDA_PTX_DIR=/tmp/tl EMBER_CUDA_TIMELINE=40 timeout -s KILL 120 $E bench -backend cuda -p 0 -n 64 -r 1 -m /tmp/v2.gguf >"$L/tl_v2_pf$pf.log" 2>&1
	el "pf $pf: $(grep 'cuda timeline' "$L/tl_v2_pf$pf.log" | tr '\n' ' ')"
done
el done
