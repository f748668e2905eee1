#!/bin/sh
# s51-call1.sh (written in session 50, not run): build/wip/lo-splitk.patch (K split over
# a block's four warps in the 32-value types' dense batch-1 products, 2-8 row products
# summing in the same phases) and build/wip/q4k-r2.patch (Q4_K batch-1 products of small
# grids at two rows a warp, EMBER_CUDA_Q4K_ROWS=4 turning it off on the same PTX).
# Tests, then tg128 of the committed build (bin/base) against the patched one: 8B Q4_0,
# Q4_1, Q5_1 (lo-splitk), 8B Q4_K_M and V2-Lite Q4_K_M (q4k-r2, with and without it).
# lo-splitk's LO50_SK 2 and 1 run as matmul.ptx variants (-DLO50_SK=N, EMBER_CUDA_LO_SK=N).
# Local steps: `git apply build/wip/lo-splitk.patch && git apply build/wip/q4k-r2.patch
# && sh build/wip/s48-prep.sh 1`; carry bin/dev, bin/base; after: `sh build/wip/s48-prep.sh
# restore`; for what wins, every module's PTX from $OUT/ptx.tar.xz into kernels/cuda
# (only matmul.ptx's body should change), TestPTXMatchesSources, commit; revert a patch
# that loses (`git apply -R`) and make the PTX again in a second call.
set -u
export MODELS="q40 q41 q51 q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s51c1}"
ptx_all /tmp/px
for k in 1 2; do
	rm -rf /tmp/px$k && cp -r /tmp/px /tmp/px$k && sh build/ptx-one.sh /tmp/px$k matmul -DLO50_SK=$k 2>/dev/null || el "LO50_SK=$k failed"
done
(cd inference/backend/cuda && EMBER_CUDA_PTX_DIR=/tmp/px2 EMBER_CUDA_LO_SK=2 timeout -s KILL 150 $R/bin/dev/cuda.test -test.run 'TestMatVecBatch1|MatMulShared' 2>&1 | tail -1 | sed 's/^/SK 2 tests: /')
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMatVec|DenseEvict|KernelNamesExist|EmbeddedKernelsWait|RunKernelWeights|IDW|MMVQueue|MatMulShared|MV1xQueue|FusedDecoderLayers|RowsPerBlock|Q4KTwoRows' 300
tgroup 1 'TestConformance$' 300
model_tests 300
wait
el "tests done"
grep -E -B2 -A8 -- '--- FAIL' /tmp/g0.log | head -40
unset EMBER_CUDA_PTX_DIR
base_bin
b() { d=$1 m=$2; shift 2; q env EMBER_CUDA_PTX_DIR=$d "$@" $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf; }
for r in 1 2; do
	for m in q40 q41 q51; do
		el "$m tg128 base / SK 4 / SK 2 / SK 1: $(q $B bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf) / $(b /tmp/px $m) / $(b /tmp/px2 $m EMBER_CUDA_LO_SK=2) / $(b /tmp/px1 $m EMBER_CUDA_LO_SK=1)"
	done
	for m in q4 v2; do
		el "$m tg128 base / new / new four rows: $(q $B bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf) / $(b /tmp/px $m) / $(b /tmp/px $m EMBER_CUDA_Q4K_ROWS=4)"
	done
done
DETAIL="mmv_q4_0_1" timeout -s KILL 120 env EMBER_CUDA_PTX_DIR=/tmp/px sh build/profile-cuda.sh $E /tmp/q40.gguf $L/prof -p 0 -n 32 -r 1 2>&1 | grep -E 'one step|mmv_|Achieved Active Warps|Theoretical Occupancy' | head -20
