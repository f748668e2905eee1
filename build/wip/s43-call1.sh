#!/bin/sh
# s43-call1.sh (written in session 42, not run: its device time was spent): two patches
# at once (build/wip/q5pack-idwq.patch is q5pack.patch and idwq.patch together; each also
# applies alone to main):
#   q5pack: Q5_0 weights packed per row (qs[16*nb] | qh u32[nb] | d f16[nb], as Q8_0's
#     and Q6_K's), so that mv1_q5_0, the generic mat-vecs, mmq and deq read aligned words;
#   idwq: mmv_idwq_q5_0, per-head Q5_0 runs over F32 rows that each block rounds to Q8_0
#     itself (V2-Lite's attn_k_b over q_nope: no quant_q8 launch a layer);
#     EMBER_CUDA_NO_IDWQ=1 turns it off, so the call times q5pack alone too.
# Session 42's ncu of mmv_id_q5_0 (V2-Lite's routed downs of 14 layers): 10.85 us at 1.1
# TB/s, 62% of its global sectors excess (2-byte loads of 22-byte blocks), issue slots
# 42% busy. Every module's PTX is made here (common.cuh changes: all hashes) into $OUT
# (ptx.tar.xz); on it the backend's product, conformance, Q5_0 and mmv_idwq tests, all
# CUDA goldens and deepseek2's CUDA tests; then V2-Lite tg128 (three rounds: both,
# q5pack alone, main), pp512 and 64 streams against bin/base/ember (main's HEAD, its
# embedded PTX), alternating.
#
# Here, before the call:
#   git apply build/wip/q5pack-idwq.patch && TESTS="cuda archs deepseek2" sh build/dev-build.sh
#   git apply -R build/wip/q5pack-idwq.patch   # the stale-PTX warning is expected
#   mkdir -p bin/base && go build -tags nogui -ldflags='-s -w' -o bin/base/ember . && xz -f bin/base/ember
#   move testdata/vocab, testdata/tokenizers and kernels/cuda/*.ptx out of the tree (the
#   carry's 64 MiB; the PTX is made on the device), carry bin/dev and bin/base; restore after.
set -u
{ git apply build/wip/q5pack-idwq.patch || patch -p1 -s <build/wip/q5pack-idwq.patch; } || { echo "patch does not apply"; exit 1; }
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s43c1}"
base_bin
ptx_tests 'MatMul|MMQ|MMV|MatVec|Products|IDW|F16Cop|CublasDequant|CublasMatMul|SwiGLUQ8|MoERouting|HeadProducts' # every module's PTX ($OUT/ptx.tar.xz) and the tests on it
t() { q env $1 bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/v2.gguf; }
for r in 1 2 3; do el "v2 tg128: both $(t "$N") q5pack $(t "EMBER_CUDA_NO_IDWQ=1 $N") main $(t "$B")"; done
el "launches a step: $(EMBER_CUDA_PTX_DIR=/tmp/px EMBER_CUDA_STATS=1 $E bench -backend cuda -p 0 -n 8 -r 1 -m /tmp/v2.gguf 2>&1 | grep -o 'last batch of [0-9+]* kernels, [0-9]*')"
el "v2 pp512: packed $(p env $N bench -backend cuda -p 512 -n 0 -r 1 -m /tmp/v2.gguf) main $(p "$B" bench -backend cuda -p 512 -n 0 -r 1 -m /tmp/v2.gguf)"
el "v2 64 streams: packed $(s env $N bench -backend cuda -streams 64 -p 512 -n 128 -m /tmp/v2.gguf) main $(s "$B" bench -backend cuda -streams 64 -p 512 -n 128 -m /tmp/v2.gguf)"
