#!/bin/sh
# s45-call1.sh (written in session 44, not run: its device time was spent): Q5_0
# weights stored as Q8_0 ($EMBER_CUDA_WIDEN=1, inference/backend/cuda/widen.go: the same
# values, 34 bytes a block against 22). Session 43's ncu: mmv_id_q5_0 11.40 us for
# V2-Lite's Q5_0 routed downs (~1.05 TB/s, ALU the busiest pipe) against mmv_id_q8_0
# 9.2 us for the Q8_0 layers' 55% larger downs (~2.0 TB/s); the skip table put the Q5_0
# downs at ~9.5 us of the chain a layer, the Q8_0 ones at ~7. Expected: V2-Lite tg128
# +2-3% if the widened downs run as the Q8_0 ones do. Tests first with the variable
# set: TestWidenQ5Products, the MoE/IDW/head products, conformance, the CUDA goldens and
# deepseek2's CUDA tests; then V2-Lite tg128 widened / not, alternating, 3 rounds; the
# 8B once each (no Q5_0 there: the same); V2-Lite pp512 and 64 streams each way.
# Before: sh build/wip/s45-prep.sh 1 (carry bin/dev); after: s45-prep.sh restore. If it
# gains and the tests pass: make it the default (widenFromEnv: on unless "0"), say so in
# README (memory: +55% on Q5_0 tensors, ~1 GB for V2-Lite; spare() keeps half the
# device free) and NOTES.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s45c1}"
export EMBER_CUDA_WIDEN=1
tgroup 0 'TestWidenQ5Products|MoERouting|IDW|HeadProducts|MatVec' 300
tgroup 1 'Conformance' 300
model_tests 300
wait
el "tests done (widened)"
unset EMBER_CUDA_WIDEN
t() { q env $1 "$E" bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$2.gguf; }
W=EMBER_CUDA_WIDEN=1 P=EMBER_CUDA_WIDEN=0
for r in 1 2 3; do el "v2 tg128 wide/plain: $(t $W v2) / $(t $P v2)"; done
el "q4 tg128 wide/plain: $(t $W q4) / $(t $P q4)"
el "v2 pp512 wide/plain: $(p env $W "$E" bench -backend cuda -p 512 -n 0 -r 1 -m /tmp/v2.gguf) / $(p env $P "$E" bench -backend cuda -p 512 -n 0 -r 1 -m /tmp/v2.gguf)"
el "v2 64 streams wide/plain: $(s env $W "$E" bench -backend cuda -streams 64 -p 512 -n 128 -m /tmp/v2.gguf) / $(s env $P "$E" bench -backend cuda -streams 64 -p 512 -n 128 -m /tmp/v2.gguf)"
