#!/bin/sh
# s57-call2.sh (for session 57): build/wip/qpe-side.patch (written in session 56, tested
# on the CPU only: the goldens on ref and CPU pass with it). In a DeepSeek-V2 decode step
# the absorbed query (attn_k_b as stored, no zero rope rows) writes only the latent
# columns of each head's [rope | latent] row, so q_pe's rotation and placement
# (rope2_set) move into the latent-cache branch after mla_kv, off the chain; groups.go
# runs products of one row whose outputs are spaced further apart than a row as one
# mmv_idw launch (its output stride the spacing). First the tests on the GPU
# (TestGroupsSpacedBits and TestGroupsSpacedRows, new; TestIDWBits, TestBranchedGraph,
# conformance, the goldens, deepseek2's CUDA tests), then V2-Lite tg128, main's binary
# (bin/base) against the patched one, six rotated rounds.
# Local steps: bin/base/ember.xz built from main (go build -tags nogui, xz); git apply
# build/wip/qpe-side.patch; bin/dev built (TESTS="cuda archs deepseek2"); testdata/vocab,
# testdata/tokenizers and kernels/cuda/*.ptx held out; carry bin/dev and bin/base.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s57c2}"
base_bin
tgroup 0 'TestGroupsSpaced|TestIDWBits|TestBranchedGraph|TestBranchQueue' 200
tgroup 1 'Conformance' 200
model_tests 220
wait
grep -E -- '--- (PASS|FAIL)' /tmp/g0.log | head -20
el "tests done"
sweep 6 v2 "$B" "$E"
el done
