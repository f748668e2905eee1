#!/bin/sh
# s64-call1.sh (session 64): KV cache rows held in L2. The decode attention's copies of
# the cache rows (attention_short576 for V2-Lite, attention_dec128_1_* for the 8B) with
# an L2 evict-last policy (common.cuh's kv_cp16 built with -DEM_KV_EL, in /tmp/el), with
# and without a persisting L2 set-aside (EMBER_CUDA_L2_PERSIST=max), against the
# embedded PTX. First the latent and short-attention tests and the goldens on /tmp/el
# (the hint must not change a bit), timelines of batch 125 of tg128 (does the
# attention's span shrink?), then rotated tg128 rounds of both models.
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s64c1}"
mk_el() { # DIR: DIR's attention modules made again with -DEM_KV_EL
	for m in attention_short attention_dec; do sh build/ptx-one.sh "$1" $m -DEM_KV_EL 2>"$1/$m.el.log" || el "EL $m FAILED in $1"; done
}
(sh build/ptx-copy.sh /tmp/el && mk_el /tmp/el) &
(sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED"; rm -rf /tmp/tlel && cp -r /tmp/tl /tmp/tlel && mk_el /tmp/tlel) &
wait
grep -c cache_hint /tmp/el/attention_short.ptx /tmp/el/attention_dec.ptx /tmp/tlel/attention_short.ptx
el "models and PTX ready"
export EMBER_CUDA_PTX_DIR=/tmp/el EMBER_CUDA_L2_PERSIST=max
tgroup 0 'TestShortAttention|TestAttentionLatent|TestLatentAttention|TestAttentionDec|TestKernelNamesExist' 150
model_tests 150
wait
unset EMBER_CUDA_PTX_DIR EMBER_CUDA_L2_PERSIST
el "tests done"
for m in v2 q4; do
	for side in tl tlel; do
		env EMBER_CUDA_PTX_DIR=/tmp/$side EMBER_CUDA_L2_PERSIST=max EMBER_CUDA_TIMELINE=125 timeout -s KILL 120 "$E" bench -backend cuda -p 0 -n 128 -r 1 \
			-m "/tmp/$m.gguf" >"$L/tl_${m}_$side.log" 2>&1
		el "$m $side: $(grep 'cuda timeline of' "$L/tl_${m}_$side.log")"
		grep -A12 '^kernel  *count' "$L/tl_${m}_$side.log" | grep -E 'attention|rope|mla|mmv_idw_q8_0'
	done
done
sweep 4 v2 "$E" "EMBER_CUDA_PTX_DIR=/tmp/el $E" "EMBER_CUDA_PTX_DIR=/tmp/el EMBER_CUDA_L2_PERSIST=max $E" "EMBER_CUDA_L2_PERSIST=max $E"
sweep 3 q4 "$E" "EMBER_CUDA_PTX_DIR=/tmp/el $E" "EMBER_CUDA_PTX_DIR=/tmp/el EMBER_CUDA_L2_PERSIST=max $E" "EMBER_CUDA_L2_PERSIST=max $E"
el done
