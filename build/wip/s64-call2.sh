#!/bin/sh
# s64-call2.sh (session 64): attention_short576's latent rows by bulk copies, a thread a
# row on an mbarrier (build/micro/kvcopy.cu: ~4-6 ns a row against cp.async's ~14).
# attention_short.ptx made from the tree (the new kernel) and returned; the latent,
# short-attention and name tests, the goldens and deepseek2's CUDA tests on it;
# timelines of batch 125 of tg128 with the old kernel (build/wip/s64-old-attention_short.cu)
# and the new; then rotated tg128 rounds of V2-Lite, embedded against the new.
# Before the call (the old kernel, not kept in the tree; untracked files travel): git show 088701a~1:kernels/cuda/attention_short.cu >build/wip/s64-old-attention_short.cu
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s64c2}"
(sh build/ptx-copy.sh /tmp/bk && cp /tmp/bk/attention_short.ptx "$L/") &
(sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED"
	rm -rf /tmp/tlold && cp -r /tmp/tl /tmp/tlold && cp build/wip/s64-old-attention_short.cu /tmp/tlold/attention_short.cu &&
		sh build/ptx-one.sh /tmp/tlold attention_short 2>/dev/null || el "OLD TIMELINE PTX FAILED") &
wait
el "models and PTX ready"
export EMBER_CUDA_PTX_DIR=/tmp/bk
tgroup 0 'TestShortAttention|TestAttentionLatent|TestLatentAttention|TestKernelNamesExist|TestEmbeddedKernelsWait' 200
model_tests 200
wait
unset EMBER_CUDA_PTX_DIR
el "tests done"
for side in tlold tl; do
	env EMBER_CUDA_PTX_DIR=/tmp/$side EMBER_CUDA_TIMELINE=125 timeout -s KILL 120 "$E" bench -backend cuda -p 0 -n 128 -r 1 \
		-m /tmp/v2.gguf >"$L/tl_v2_$side.log" 2>&1
	el "v2 $side: $(grep 'cuda timeline of' "$L/tl_v2_$side.log")"
	grep -A12 '^kernel  *count' "$L/tl_v2_$side.log" | grep -E 'attention|mmv_idw_q8_0'
done
sweep 6 v2 "$E" "EMBER_CUDA_PTX_DIR=/tmp/bk $E"
el done
