#!/bin/sh
# s58-call3.sh (for session 58; worth its time if s58-call2.sh finds the side run of
# the attention's branch the longer, i.e. leaving out rope2_set shortens the step and
# leaving out quant_q8 does not): build/wip/mla-rope.patch (written in session 57,
# compiled with nvcc 12.4 here, no GPU run). mla_kv_rope: the latent cache row (mla_kv)
# and q_pe's rotation into the query rows' rope dims (rope2_set of one tensor) in one
# launch on the branch's side (fuseMLAKVRoPE in mla.go, from fuseRoPE1Set);
# EMBER_CUDA_NO_MLA_ROPE=1 keeps the two. ops.cu's mla_kv and rope2_set bodies became
# device functions that both kernels call (rope2_set's PTX changed with nvcc 12.4: run
# its tests). Every module's PTX made here and returned; on it the new tests
# (TestMLAKVRoPEBits, TestMLAKVRoPEQueue), the fused RoPE tests, conformance, the
# goldens and deepseek2's CUDA tests; then V2-Lite tg128 six rotated rounds: HEAD's
# binary, the patched one, the patched one with EMBER_CUDA_NO_MLA_ROPE=1; and the 8B
# (rope2_set's new PTX) three rounds, HEAD against patched. Local steps: bin/base from
# HEAD; git apply build/wip/mla-rope.patch; bin/dev (TESTS="cuda archs deepseek2");
# testdata/vocab, testdata/tokenizers and kernels/cuda/*.ptx held out; carry bin/dev and
# bin/base. Landing: the returned ops.ptx into kernels/cuda (same_bodies for the rest).
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s58c3}"
base_bin
ptx_tests 'TestMLAKVRoPE|TestFusedRoPE|TestFusedDecoderLayers|TestLatentKV|TestKernelNames'
grep -E -- '--- (PASS|FAIL)' /tmp/g0.log | head -20
same_bodies /tmp/px ops
sweep 6 v2 "$B" "$N" "EMBER_CUDA_NO_MLA_ROPE=1 $N"
sweep 3 q4 "$B" "$N"
el done
