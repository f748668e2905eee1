#!/bin/sh
# s58-callA.sh (session 58): s58-call1.sh's checks of session 57's query split, on a
# binary that also holds build/wip/short-tile.patch (attention_short's tile sized for the
# positions reached; EMBER_CUDA_SHORT_TILE=256 restores the old sizing) and
# build/wip/mla-rope.patch (mla_kv + q_pe's rope2_set as one launch;
# EMBER_CUDA_NO_MLA_ROPE=1 keeps the two). Every module's PTX made here (ops.cu changed)
# and returned; on it the branch, routing, latent-attention, fused RoPE and new tests,
# conformance, the CUDA goldens of every architecture and deepseek2's CUDA tests; then
# HEAD's figures (bin/base): bench -p 512 -n 128 -r 3 of the 8B Q4_K_M and V2-Lite.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s58cA}"
base_bin
ptx_tests 'TestBranchedGraph|TestBranchQueue|TestMoERouting|TestGroupsSpaced|TestAttentionLatent|TestShortAttention|TestLatentAttention|TestShortTileSized|TestMLAKVRoPE|TestFusedRoPE|TestFusedDecoderLayers|TestLatentKV|TestKernelNames'
grep -E -- '--- (PASS|FAIL)' /tmp/g0.log | head -40
same_bodies /tmp/px ops
for m in q4 v2; do
	el "HEAD $m: $(timeout -s KILL 150 $B bench -backend cuda -p 512 -n 128 -r 3 -m /tmp/$m.gguf 2>&1 | grep '^| ' | tail -2 | tr '\n' ' ')"
done
el done
