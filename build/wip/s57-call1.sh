#!/bin/sh
# s57-call1.sh (for session 57): the GPU tests session 56 could not run after making
# ropeHeads 4 (was 8) the default: the fused RoPE tests (rope2_f32, rope2_set with and
# without V, the q_pe form), the fused decoder layers, conformance, the CUDA goldens and
# deepseek2's CUDA tests, on the committed PTX (embedded). Local steps: bin/dev built
# (TESTS="cuda archs deepseek2"); testdata/vocab, testdata/tokenizers and
# kernels/cuda/*.ptx held out of the carry; carry bin/dev.
set -u
export MODELS="none" # no model: tests only
. build/gpu-setup.sh "${OUT:-/tmp/s57c1}"
tgroup 0 'TestFusedRoPE|TestFusedDecoderLayers|TestFusedAttentionQ8K' 250
tgroup 1 'Conformance' 250
model_tests 250
wait
grep -E -- '--- (PASS|FAIL)' /tmp/g0.log | head -20
el done
