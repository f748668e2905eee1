#!/bin/sh
# s49-call2.sh (session 49): the working tree's kernels, every module's PTX made here.
# Changes against HEAD (bin/base): mv1lo.cuh (Q2_K and Q3_K batch-1 products on mv1:
# mmv_q2_k_1, mmv_q3_k_1, their _1e, mmv_id_ and mmv_idw_ forms; until now mmv_generic's
# byte loads), q5k-nx.patch (Q5_K products of 2-8 rows on mmv_q5_k_nx), HALF_U 4 (F16 and
# BF16 rows four chunks a lane; s49-call1.sh measured it). Local steps: `sh
# build/wip/s48-prep.sh 1` (bin/base from HEAD, bin/dev from the working tree, PTX and
# test data held out), carry bin/dev and bin/base; `sh build/wip/s48-prep.sh restore`
# after, then the PTX from $OUT/ptx.tar.xz into kernels/cuda.
# Tests on the call's PTX: the mat-vec (Q2_K/Q3_K at K 256 .. 40,960, per-head groups,
# Q3_K_M's Q/K/V), shared, queue, name and IDW tests, conformance, the goldens,
# deepseek2's CUDA tests. Then tg128 of 8B Q3_K_M and Q2_K, base / new, two rounds;
# Q5_K_M serving 4 and 16 streams (128 + 64 tokens), base / new; F16 tg128.
set -u
export MODELS="q3 q2 q5 f16"
. build/gpu-setup.sh "${OUT:-/tmp/s49c2}"
ptx_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMatVecBatch1|DenseEvict|KernelNamesExist|EmbeddedKernelsWait|RunKernelWeights|IDW|MMVQueue|MatMulShared|MV1xQueue|FusedDecoderLayers' 300
tgroup 1 'TestConformance$' 300
model_tests 300
wait
el "tests done"
unset EMBER_CUDA_PTX_DIR
base_bin
N="EMBER_CUDA_PTX_DIR=/tmp/px $E"
for r in 1 2; do
	for m in q3 q2; do
		el "$m tg128 base / new: $(q $B bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf) / $(q env $N bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf)"
	done
done
el "q3 pp512 tg128 new: $(p env $N bench -backend cuda -p 512 -n 128 -r 1 -m /tmp/q3.gguf)"
for st in 4 16; do
	el "q5 $st streams base / new: $(s $B bench -backend cuda -streams $st -p 128 -n 64 -m /tmp/q5.gguf) / $(s env $N bench -backend cuda -streams $st -p 128 -n 64 -m /tmp/q5.gguf)"
done
el "f16 tg128 base / new: $(q $B bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/f16.gguf) / $(q env $N bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/f16.gguf)"
el "q5 tg128 base / new: $(q $B bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/q5.gguf) / $(q env $N bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/q5.gguf)"
