#!/bin/sh
# s69-call2.sh (session 69; not run: no machine after s69-call1): the three micros, ~3
# minutes, no binary needed (carry nothing; nvcc only; hold kernels/cuda/*.ptx, testdata/vocab
# and testdata/tokenizers out as usual so the tree fits the carry). (1) build/micro/ffs2.cu: the
# engine's ffn kernel with one difference from session 68's first micro form
# (ffs_old.cuh) removed at a time, beside the old form and the chain, at gaps 0 and 8 us
# (s69-call1: the engine's code 35.9 against the old form's 34.3 and the chain's 36.1 us
# a layer). (2) build/micro/moefs.cu: V2-Lite's routed experts split along the hidden
# width against the engine's chain (mmv_route_q4_k, swiglu_q8, mmv_id_q8_0, moe_sum_add).
# (3) build/micro/qkb.cu: V2-Lite's absorbed query (q_nope, quant_q8, attn_k_b) as one
# launch of clusters a head, bit for bit against the chain. Session 68's F16/BF16 FMA
# patch is build/wip/s68-call1.sh, a call of its own (its header says what it needs).
set -u
export MODELS="none"
. build/gpu-setup.sh "${OUT:-/tmp/s69c2}"
cd build/micro
for m in ffs2 moefs qkb; do
	nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/$m $m.cu 2>&1 | grep -i error &
done
wait
for m in ffs2 moefs qkb; do
	for g in 0 8000; do GAP=$g timeout -s KILL 150 /tmp/$m 2>&1 | tee -a "$L/$m.txt"; done
	el "$m done"
done
