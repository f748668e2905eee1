#!/bin/sh
# s57-call6.sh (session 57): AttentionLatent again, with more rounds (s57-call5.sh: 655.3
# against 651.1, 3 of 6), beside two settings that the new V2-Lite chain may move: the
# branch's edges (1 against the default 3: the latent-cache branch now holds q_pe's
# rotation) and mmv_route_q4_k at 2 blocks an SM (default 3; session 46: even). V2-Lite
# tg128, HEAD~1's binary (bin/base) and HEAD's (bin/dev, the new attention_short.ptx
# embedded), six rotated rounds of four sides; then the final figures (bench -p 512 -n
# 128 -r 3) of the 8B Q4_K_M and V2-Lite Q4_K_M on HEAD. Local steps: bin/base from
# HEAD~1, bin/dev (TESTS=cuda) from HEAD; testdata/vocab, testdata/tokenizers and
# kernels/cuda/*.ptx held out; carry both.
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s57c6}"
base_bin
wait
sweep 6 v2 "$B" "$E" "EMBER_CUDA_BRANCH_EDGES=1 $E" "EMBER_CUDA_ROUTE_BLOCKS=2 $E"
for m in q4 v2; do
	el "$m: $(timeout -s KILL 150 $E bench -backend cuda -p 512 -n 128 -r 3 -m /tmp/$m.gguf 2>&1 | grep '^| ' | tail -1)"
done
el done
