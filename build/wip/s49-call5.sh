#!/bin/sh
# s49-call5.sh (session 49): q6k_x (mv1.cuh), the activation chunks of a Q6_K-layout lane,
# shared by mv1_q6_k and mv1_q23_k instead of written twice, and a comment rewrapped in
# mv1x.cuh: no kernel should change. Every module's PTX made here and compared with the
# committed PTX, body by body (same_bodies: only the sources' hash line may differ), then
# the mat-vec test on it. Carry: bin/dev with cuda.test only (`go test -c -tags nogui -o
# bin/dev/cuda.test ./inference/backend/cuda/ && xz -9 bin/dev/cuda.test`); the tree's
# committed PTX stays in it.
set -u
export MODELS=none
. build/gpu-setup.sh "${OUT:-/tmp/s49c5}"
ptx_all /tmp/px
same_bodies /tmp/px
el "bodies compared"
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMatVecBatch1' 150
wait
