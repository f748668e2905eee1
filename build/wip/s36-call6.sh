#!/bin/sh
# s36-call6.sh: what an 8B Q4_K_M step ahead of the host is made of. tg128 (ahead, the
# default) whole and with kernels left out (EMBER_CUDA_SKIP: wrong ids, the chain's
# timing): each of the small kernels, all four, and the products' chain alone; V2-Lite
# whole and without its small kernels. bin/dev built with TESTS=" ". ~2 minutes.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s36c6}"
wait
B="bench -backend cuda -p 0 -n 128 -r 3"
el "8B whole $(q "$E" $B -m /tmp/q4.gguf)"
for k in add_rms_norm_q8_k attention_dec rope2_set swiglu_q8_k argmax_f32,get_rows; do
	el "8B without $k $(EMBER_CUDA_SKIP=$k q "$E" $B -m /tmp/q4.gguf)"
done
el "8B without norms, rope, attention, swiglu $(EMBER_CUDA_SKIP=add_rms_norm_q8_k,attention_dec,rope2_set,swiglu_q8_k q "$E" $B -m /tmp/q4.gguf)"
el "8B without the mat-vecs $(EMBER_CUDA_SKIP=mmv q "$E" $B -m /tmp/q4.gguf)"
el "8B whole $(q "$E" $B -m /tmp/q4.gguf)"
el "V2-Lite whole $(q "$E" $B -m /tmp/v2.gguf)"
el "V2-Lite without the mat-vecs $(EMBER_CUDA_SKIP=mmv q "$E" $B -m /tmp/v2.gguf)"
