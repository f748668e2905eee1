#!/bin/sh
# s35-call5.sh: mmv_id1_q4_k / mmv_idw1_q4_k (one-step Q4_K rows of at most 2,048, eight
# rows a warp: DeepSeek-V2's query heads and its routed gate/up experts); matmul.ptx made
# (every module into $OUT/ptx.tar.xz); TestOneStepIDBits (bits against mmv_idw and
# mmv_id), head products (TestConformance), mat-vec, MoE routing and graph tests, and
# deepseek2's CUDA tests on it; V2-Lite tg128 against EMBER_CUDA_NO_ID1=1, alternating.
# bin/dev built with TESTS="cuda deepseek2". ~4 minutes.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s35c5}"
D=/tmp/pv
ptx_all $D
export EMBER_CUDA_PTX_DIR=$D
tgroup 0 'TestConformance$|TestKernelNamesExist' 160
tgroup 1 'TestOneStepIDBits|TestMatVecBatch1|TestMoERouting|TestBranchedGraph|TestFusedDecoderLayers' 160
(cd inference/model/deepseek2 && timeout -s KILL 160 "$R/bin/dev/deepseek2.test" -test.v -test.run 'CUDA' 2>&1 | grep -E '^(--- |ok|FAIL|PASS)' | tail -12) &
wait
el tests done
B="bench -backend cuda -p 0 -n 128 -r 3"
for r in 1 2 3; do
	el "round $r V2-Lite: id1 $(q "$E" $B -m /tmp/v2.gguf) | id $(EMBER_CUDA_NO_ID1=1 q "$E" $B -m /tmp/v2.gguf)"
done
el "8B Q4_K_M: $(q "$E" $B -m /tmp/q4.gguf)"
