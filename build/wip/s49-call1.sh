#!/bin/sh
# s49-call1.sh (written in session 48 for session 49's first call; ~6 minutes). Local
# steps first: `TESTS="cuda archs deepseek2" sh build/dev-build.sh` on HEAD, then move
# testdata/vocab, testdata/tokenizers and kernels/cuda/*.ptx out of the tree for the
# carry (build/wip/s45-prep.sh's hold; `s45-prep.sh restore` after), carry bin/dev.
# 1. On the embedded (committed) PTX, what s48-call5.sh could not finish: the mat-vec,
#    shared, queue, name and IDW tests, conformance, the CUDA goldens and deepseek2's CUDA
#    tests. They check mmv_generic's F16/BF16 chunk sums (products of 2-8 rows) and
#    mv1_half's unaligned rows, which no GPU has run yet.
# 2. F16 with three chunks a lane (landed) against four (-DHALF_U=4: matmul.ptx made
#    here beside the other committed modules), tg128 of the 8B F16, four rounds.
# 3. DeepSeek-V2-Lite Q5_K_M tg128 (its routed gate/up on mmv_id_q5_k, the routing its
#    own launch) beside the Q4_K_M file.
set -u
export MODELS="f16 v2 v5"
. build/gpu-setup.sh "${OUT:-/tmp/s49c1}"
tgroup 0 'TestMatVecBatch1|DenseEvict|KernelNamesExist|EmbeddedKernelsWait|RunKernelWeights|IDW|MMVQueue|MatMulShared|FusedDecoderLayers' 300
tgroup 1 'TestConformance$' 300
model_tests 300
wait
el "tests done"
# every module made here from the committed sources (the same bodies as the embedded
# PTX), then matmul again with the flag
d=/tmp/u4
sh build/ptx-copy.sh $d >/dev/null 2>&1 || el "PTX FAILED"
sh build/ptx-one.sh $d matmul -DHALF_U=4 2>/dev/null || el "matmul -DHALF_U=4 FAILED"
ab 4 f16 "$E" "EMBER_CUDA_PTX_DIR=$d $E"
el "v2 Q4_K_M tg128 $(q $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/v2.gguf) / Q5_K_M $(q $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/v5.gguf)"
