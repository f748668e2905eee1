#!/bin/sh
# s58-call2.sh (for session 58): build/wip/short-tile.patch (written in session 57, no
# PTX change; TestShortTileSized and the other queue tests pass without a GPU). The skip
# table of s57-call7.sh had V2-Lite's attention_short576 at ~7.6 us of each layer's
# chain, and copying its older rows before its wait (s57-call8.sh) gained nothing
# measurable: its tile is sized for the graph's 256-position bound (160 rows, ~195 KB of
# shared memory), so its 16 blocks cannot be resident beside the kernel before them
# until it ends, and their early copies start late. The patch sizes the tile for the
# positions the rows reach (MaxLen rounded up to 64: 64, 128, then 160 rows; ~84 KB and
# ~157 KB), unless EMBER_CUDA_SHORT_TILE is set (then that tile, as before: =256 is the
# old sizing on the patched binary). The latent tests on the GPU (same kernel, other
# tiles), then V2-Lite tg128, six rotated rounds: patched, patched with the old sizing,
# and HEAD's binary. Local steps: bin/base from HEAD; git apply
# build/wip/short-tile.patch; bin/dev (TESTS="cuda deepseek2"); testdata/vocab,
# testdata/tokenizers and kernels/cuda/*.ptx held out; carry bin/dev and bin/base.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s58c2}"
base_bin
tgroup 0 'TestAttentionLatent|TestShortAttention|TestLatentAttention|TestShortTileSized' 200
(cd inference/model/deepseek2 && timeout -s KILL 200 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3 | sed 's/^/deepseek2: /') &
wait
grep -E -- '--- (PASS|FAIL)' /tmp/g0.log | head -20
el "tests done"
# Also which run of the attention's branch is the longer since the query split: each
# leaves out its middle launch (EMBER_CUDA_SKIP: wrong tokens, the chain's timing), the
# side's q_pe rotation (rope2_set) or the main run's rounding before attn_k_b (quant_q8).
# If only the side's shortens the step, mla_kv and rope2_set in one launch would pay.
sweep 6 v2 "$B" "$E" "EMBER_CUDA_SHORT_TILE=256 $E" "EMBER_CUDA_SKIP=rope2_set\$ $E" "EMBER_CUDA_SKIP=quant_q8\$ $E"
el done
