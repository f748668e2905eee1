#!/bin/sh
# s49-call2.sh (written in session 48): build/wip/q5k-nx.patch, Q5_K products of 2-8
# activation rows on mmv_q5_k_nx (mmv_q4_k's form with mv1_q5_k's lanes; until now
# mmv_generic's byte loads, which every Q5_K product of 2-47 rows takes: mmq, mmf and
# the f16 copies take no Q5_K below 48 rows, so a Q5_K_M model serving 2-47 streams
# decodes on them). Local steps: bin/base/ember from HEAD (a worktree, as s48-prep.sh
# does), then `git apply build/wip/q5k-nx.patch` and `TESTS="cuda archs deepseek2" sh
# build/dev-build.sh`, the PTX and test data held out of the carry (s45-prep.sh), carry
# bin/dev and bin/base; after: `git checkout kernels inference` unless it lands.
# Tests on the call's PTX: conformance (MatMul/Q5_K at 2, 7 and 33 rows), the mat-vec
# and shared tests, the goldens, deepseek2's CUDA tests. Then 8B Q5_K_M through the
# serving engine at 4 and 16 streams (128 + 64 tokens), base / new, two rounds.
set -u
export MODELS="q5"
. build/gpu-setup.sh "${OUT:-/tmp/s49c2}"
ptx_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMatVecBatch1|MatMulShared|KernelNamesExist|EmbeddedKernelsWait|MV1xQueue' 300
tgroup 1 'TestConformance$' 300
model_tests 300
wait
el "tests done"
unset EMBER_CUDA_PTX_DIR
base_bin
N="EMBER_CUDA_PTX_DIR=/tmp/px $E"
for r in 1 2; do
	for st in 4 16; do
		el "q5 $st streams base / new: $(s $B bench -backend cuda -streams $st -p 128 -n 64 -m /tmp/q5.gguf) / $(s env $N bench -backend cuda -streams $st -p 128 -n 64 -m /tmp/q5.gguf)"
	done
done
el "q5 tg128 base / new: $(q $B bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/q5.gguf) / $(q env $N bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/q5.gguf)"
