#!/bin/sh
# s64-call4.sh (session 64): attention_decD_1 (the 8B's decode attention) copies its key
# and value rows by bulk copies, a thread a row on an mbarrier, into rows padded by 16
# bytes (no swizzle), as attention_short576 does since call 3. Every module's PTX made
# from the tree (/tmp/px, returned as ptx.tar.xz: only attention_dec's body should
# change); the decode-attention tests, conformance, the goldens and deepseek2's CUDA
# tests on it; a timeline of the 8B's batch 125 of tg128 (old and new); rotated tg128
# rounds of the 8B, embedded (old kernel; the host's larger shared memory) against /tmp/px.
# Before the call (the old kernel, not kept in the tree; untracked files travel): git show 088701a:kernels/cuda/attention_one.cuh >build/wip/s64-old-attention_one.cuh
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s64c4}"
(ptx_all /tmp/px) &
(sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED"
	rm -rf /tmp/tlold && cp -r /tmp/tl /tmp/tlold && cp build/wip/s64-old-attention_one.cuh /tmp/tlold/attention_one.cuh &&
		sh build/ptx-one.sh /tmp/tlold attention_dec 2>/dev/null || el "OLD TIMELINE PTX FAILED") &
wait
el "models and PTX ready"
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestDecodeAttention|TestBatchedDecodeAttention|TestDec1Cluster|TestPagedAttention|TestFusedAttention|TestAttentionChoice|TestKernelNamesExist|TestEmbeddedKernelsWait' 150
tgroup 1 'TestConformance$' 150
model_tests 150
wait
unset EMBER_CUDA_PTX_DIR
el "tests done"
for side in tlold tl; do
	env EMBER_CUDA_PTX_DIR=/tmp/$side EMBER_CUDA_TIMELINE=125 timeout -s KILL 120 "$E" bench -backend cuda -p 0 -n 128 -r 1 \
		-m /tmp/q4.gguf >"$L/tl_q4_$side.log" 2>&1
	el "q4 $side: $(grep 'cuda timeline of' "$L/tl_q4_$side.log")"
	grep -A12 '^kernel  *count' "$L/tl_q4_$side.log" | grep -E 'attention|rope'
done
sweep 5 q4 "$E" "EMBER_CUDA_PTX_DIR=/tmp/px $E"
el done
