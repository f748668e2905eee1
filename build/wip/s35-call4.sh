#!/bin/sh
# s35-call4.sh: two changes, each A/B'd by its switch on one binary and one PTX set:
# (1) mmv_idw (matmul.cu: per-head runs of weights with their first weight loads before
# the PDL wait; groups.go picks it; EMBER_CUDA_NO_IDW=1 is mmv_id as before), V2-Lite;
# (2) attention_decD_1r (dec1-rope2.patch: rope2_set inside the one-row attention, in
# the 64/128/256 forms; EMBER_CUDA_NO_DEC1_ROPE=1 is the two launches as before), 8B.
# Every module's PTX made (common.cuh changed) into $OUT/ptx.tar.xz; the fused, head
# product, attention, conformance and graph tests and deepseek2's CUDA tests on it.
# bin/dev built with TESTS="cuda deepseek2". ~5 minutes.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s35c4}"
D=/tmp/pv
ptx_all $D
export EMBER_CUDA_PTX_DIR=$D
tgroup 0 'TestConformance$|TestKernelNamesExist' 160
tgroup 1 'TestFusedRoPEAttention|TestFusedDecoderLayers|TestMatVec|TestBranchedGraph|TestMoERouting' 160
tgroup 2 'TestDecodeAttention|TestFusedAttentionQ8K|TestAttentionChoice' 170
(cd inference/model/deepseek2 && timeout -s KILL 160 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3) &
wait
el tests done
B="bench -backend cuda -p 0 -n 128 -r 3"
for r in 1 2 3; do
	el "round $r 8B Q4_K_M: 1r $(q "$E" $B -m /tmp/q4.gguf) | two $(EMBER_CUDA_NO_DEC1_ROPE=1 q "$E" $B -m /tmp/q4.gguf)"
done
for r in 1 2 3; do
	el "round $r V2-Lite: idw $(q "$E" $B -m /tmp/v2.gguf) | id $(EMBER_CUDA_NO_IDW=1 q "$E" $B -m /tmp/v2.gguf)"
done
