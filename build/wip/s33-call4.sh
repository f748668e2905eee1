#!/bin/sh
# Session 33, device call 4: HEAD's binary (bin/dev, carried). 8B Q4_K_M tg128 whole and
# with each small kernel left out (EMBER_CUDA_SKIP: wrong results, the chain's timing),
# and V2-Lite's and Q8_0's tg128 on the same binary.
set -u
export MODELS="q4 v2 q8"
. build/gpu-setup.sh "${OUT:-/tmp/s33c4}"
wait
B="bench -backend cuda -p 0 -n 128 -r 3"
echo "8B q4 whole step $(q "$E" $B -m /tmp/q4.gguf)"
for k in add_rms_norm_q8_k attention_dec rope2_set swiglu_q8_k; do
	echo "8B q4 without $k $(EMBER_CUDA_SKIP=$k q "$E" $B -m /tmp/q4.gguf)"
done
echo "8B q4 without norms, rope, attention, swiglu $(EMBER_CUDA_SKIP=add_rms_norm_q8_k,attention_dec,rope2_set,swiglu_q8_k q "$E" $B -m /tmp/q4.gguf)"
echo "8B q4 whole step $(q "$E" $B -m /tmp/q4.gguf)"
echo "8B q8 $(q "$E" $B -m /tmp/q8.gguf)"
echo "V2-Lite $(q "$E" $B -m /tmp/v2.gguf) $(q "$E" $B -m /tmp/v2.gguf)"
