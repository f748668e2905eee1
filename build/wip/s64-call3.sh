#!/bin/sh
# s64-call3.sh (session 64): the landed attention_short576 (bulk copies). Every module's
# PTX made from the tree (/tmp/px; attention_short.ptx returned for its hash line: the
# source's header comment changed after call 2, its body must be call 2's, which the
# binary embeds), and /tmp/old: the same with the old attention_short.cu. Tests on the
# embedded PTX (short and latent attention, names, conformance; the goldens, deepseek2's
# CUDA tests); `bench -p 512 -n 128 -r 3` of V2-Lite and the 8B (the README's figures);
# then rotated tg128 rounds of V2-Lite, the old kernel against the embedded.
# Before the call (the old kernel, not kept in the tree; untracked files travel): git show 088701a~1:kernels/cuda/attention_short.cu >build/wip/s64-old-attention_short.cu
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s64c3}"
(sh build/ptx-copy.sh /tmp/px && cp /tmp/px/attention_short.ptx "$L/") &
(sh build/ptx-copy.sh /tmp/old && cp build/wip/s64-old-attention_short.cu /tmp/old/attention_short.cu &&
	sh build/ptx-one.sh /tmp/old attention_short 2>/dev/null || el "OLD PTX FAILED") &
wait
el "models and PTX ready"
tgroup 0 'TestShortAttention|TestAttentionLatent|TestLatentAttention|TestKernelNamesExist|TestEmbeddedKernelsWait' 200
tgroup 1 'TestConformance$' 200
model_tests 200
wait
el "tests done"
for m in v2 q4; do
	timeout -s KILL 150 "$E" bench -backend cuda -m /tmp/$m.gguf -p 512 -n 128 -r 3 >"$L/bench_$m.log" 2>&1
	el "$m: $(grep '^| ' "$L/bench_$m.log" | tail -2 | tr '\n' ' ')"
done
sweep 4 v2 "EMBER_CUDA_PTX_DIR=/tmp/old $E" "$E"
el done
