#!/bin/sh
# s57-call9.sh (session 57, the last ~260 s of device time): the query split across a
# DeepSeek-V2 decode step's branch. On a backend that branches, attn_q's rows are bound
# as every head's nope rows then every head's rope rows; in a decode step the latent
# projections and q_pe's (one mmv_multi of three matrices) open the branch's side
# (then mla_kv and q_pe's rotation), q_nope's product (one mat-vec) opens the main run
# (then quant_q8 and the absorbed attn_k_b product): the query heads' own launch leaves
# the chain. deepseek2's CUDA tests (decode against prefill and ref's logits) beside the
# model's writing, then V2-Lite tg128, HEAD's binary (bin/base) against the new one,
# rotated rounds. Local steps: bin/base from HEAD, bin/dev (TESTS=deepseek2) from the
# working tree; testdata/vocab, testdata/tokenizers and kernels/cuda/*.ptx held out.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s57c9}"
base_bin
(cd inference/model/deepseek2 && timeout -s KILL 80 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | grep -E -- '--- FAIL|^(ok|PASS|FAIL)|_test.go' | head -12 | sed 's/^/deepseek2: /')
wait
el "tests done"
sweep 4 v2 "$B" "$E"
el done
