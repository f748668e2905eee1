#!/bin/sh
# s57-call4.sh (session 57): s57-call1.sh and s57-call2.sh in one call. The GPU tests on
# the binary with build/wip/qpe-side.patch applied (the patch touches only groups.go,
# moe.go and deepseek2's mla.go, so the fused RoPE tests at ropeHeads 4 and the Llama
# goldens run as on main): the fused RoPE, decoder-layer and attention tests, the spaced
# groups, mmv_idw and branch tests, conformance, the goldens and deepseek2's CUDA tests;
# then V2-Lite tg128, main's binary (bin/base) against the patched one, six rotated
# rounds; then s57-call3.sh's sides on main's binary, as many rounds as time leaves.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s57c4}"
base_bin
tgroup 0 'TestFusedRoPE|TestFusedDecoderLayers|TestFusedAttentionQ8K|TestGroupsSpaced|TestIDWBits|TestBranchedGraph|TestBranchQueue' 250
tgroup 1 'Conformance' 250
model_tests 250
wait
grep -E -- '--- (PASS|FAIL)' /tmp/g0.log | head -30
el "tests done"
sweep 6 v2 "$B" "$E"
el "qpe done"
sweep 3 v2 "$B" "EMBER_CUDA_DENSE_EF=1 $B" "EMBER_CUDA_NO_IDW=1 $B" "EMBER_CUDA_CARVEOUT=off $B"
el done
