#!/bin/sh
# s45-call4.sh (session 45): the defaults as landed (Q5_0 widened, routing fused), on the
# committed PTX (bin/dev from the clean tree): the CUDA goldens and deepseek2's CUDA
# tests (which now run the fused routing and, for V2-Lite-shaped Q5_0, the widened
# weights), the routing and queue tests; then V2-Lite tg128 twice and the 8B once.
# Local: sh build/wip/s45-prep.sh 1 (carry bin/dev), then s45-prep.sh restore.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s45c4}"
tgroup 0 'MoERouting|MMVQueuePaired|Widen' 240
model_tests 240
wait
el "tests done"
t() { q $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$1.gguf; }
el "tg128 v2 $(t v2), $(t v2); q4 $(t q4)"
