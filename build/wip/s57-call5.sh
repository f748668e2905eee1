#!/bin/sh
# s57-call5.sh (session 57): AttentionLatent. DeepSeek-V2's latent attention of a few
# tokens over a short cache (attention_short576) writes each head row's latent dims
# alone (its new ocol argument: the first 64, the rope dims, left out), and attn_v_b's
# Q8_K rounding joins it, so the gather (get_rows_q8_k) leaves each layer's chain. Every
# module's PTX made here (attention_short.cu changed) and returned as ptx.tar.xz; on it
# the new tests (TestAttentionLatentBits), the attention tests, conformance, the goldens
# and deepseek2's CUDA tests; then V2-Lite tg128, HEAD's binary (bin/base, its embedded
# PTX) against the new one on the new PTX, six rotated rounds. Local steps: bin/base
# built from HEAD; bin/dev built (TESTS="cuda archs deepseek2") from the working tree;
# testdata/vocab, testdata/tokenizers and kernels/cuda/*.ptx held out; carry both.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s57c5}"
base_bin
ptx_tests 'TestAttentionLatent|TestShortAttention|TestFusedAttentionQ8K|TestAttentionChoice|TestLatentAttention'
grep -E -- '--- (PASS|FAIL)' /tmp/g0.log | head -30
sweep 6 v2 "$B" "$N"
el done
