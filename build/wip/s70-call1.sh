#!/bin/sh
# s70-call1.sh (session 70; written with no machine lent, not run): four micros, ~4-5
# minutes, no binary needed (carry nothing; nvcc only; hold kernels/cuda/*.ptx,
# testdata/vocab and testdata/tokenizers out so the tree fits the carry).
# (1) build/micro/ah1.cu first: the 8B's attention half (Q/K/V, RoPE, the new cache rows,
# the attention, O) as one launch (ah1_8: 128 blocks; ah1_16: 256) against the engine's
# chain (mmv_multi, rope2_set, attention_dec128_1_<cap>, mmv_q4_k_1), each followed by
# add_rms_norm_q8_k_1; 32 layers, N positions, GAP ns standing in for the FFN half. It
# checks the rotated query and the new cache rows bit for bit and the attention and O
# within a bound (exit 2 and WRONG when not). Its blocks of one KV head meet on a
# counter in global memory, so a hang is possible if the design is wrong: each run is
# killed after 60 s. (2) build/micro/mla1.cu: V2-Lite's attention half (Q, kv_a, the
# latent norm and RoPEs, the absorbed query, the latent attention, v_b, O) as one launch of
# 128 blocks that meet three times, 27 layers, checked stage by stage against a host
# reference of layer 0; the figure to beat is the engine chain's ~19.4 us a layer (s59's
# timeline). (3)-(5) session 69's three micros, as build/wip/s69-call2.sh runs them (ffs2,
# moefs, qkb).
set -u
export MODELS="none"
. build/gpu-setup.sh "${OUT:-/tmp/s70c1}"
cd build/micro
for m in ah1 mla1 ffs2 moefs qkb; do
	nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -Xptxas -v -o /tmp/$m $m.cu >"$L/$m-ptxas.txt" 2>&1 &
done
wait
grep -A2 "entry function 'ah1" "$L/ah1-ptxas.txt" | grep -E "Used|spill"
for v in "N=64" "N=128" "N=200" "N=64 GAP=8000" "N=128 GAP=8000"; do
	env $v timeout -s KILL 60 /tmp/ah1 >/tmp/o.txt 2>&1
	echo "rc $? ($v)" >>/tmp/o.txt
	tee -a "$L/ah1.txt" </tmp/o.txt
done
el "ah1 done"
grep -A2 "entry function 'mla1" "$L/mla1-ptxas.txt" | grep -E "Used|spill"
for v in "N=64" "N=200" "N=64 GAP=8000"; do
	env $v timeout -s KILL 60 /tmp/mla1 >/tmp/o.txt 2>&1
	echo "rc $? ($v)" >>/tmp/o.txt
	tee -a "$L/mla1.txt" </tmp/o.txt
done
el "mla1 done"
for m in ffs2 moefs qkb; do
	for g in 0 8000; do GAP=$g timeout -s KILL 150 /tmp/$m 2>&1 | tee -a "$L/$m.txt"; done
	el "$m done"
done
