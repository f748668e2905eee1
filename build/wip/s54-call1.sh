#!/bin/sh
# s54-call1.sh (session 54): session 53's call 2 again (its PTX was lost with the session):
# every module's PTX made on the H200 for the review changes (mmvgen.cuh's warps4_meet and
# F16/BF16 chunk loop, mv1x.cuh's half_chunk, matmul.cu's mmv_f32_1w ending), returned as
# $OUT/ptx.tar.xz; the mat-vec, F32-weight, routing, conformance, golden and deepseek2
# tests on it; the final figures (8B and V2-Lite Q4_K_M, -r 3, whole table rows) and 8B
# F16 tg128 with the committed PTX (embedded) against the new one (EMBER_CUDA_PTX_DIR).
# Local steps: bin/dev built (TESTS="cuda archs deepseek2"; embeds the committed PTX),
# testdata/vocab, testdata/tokenizers and kernels/cuda/*.ptx held out of the carry.
set -u
export MODELS="q4 v2 f16"
. build/gpu-setup.sh "${OUT:-/tmp/s54c1}"
t() { [ $(($(date +%s) - T0)) -lt 480 ]; }
ptx_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMatVecBatch1|TestF32Weight|TestKernelNamesExist|TestEmbeddedKernelsWait|TestMoERouting' 200
tgroup 1 'TestConformance$' 200
model_tests 200
wait
grep -E -- '--- (PASS|FAIL)' /tmp/g0.log | head -30
el "tests done"
unset EMBER_CUDA_PTX_DIR
N="EMBER_CUDA_PTX_DIR=/tmp/px $E"
for m in q4 v2; do
	t && el "$m (new PTX, -r 3):" && timeout -s KILL 120 env EMBER_CUDA_PTX_DIR=/tmp/px $E bench -backend cuda -p 512 -n 128 -r 3 -m /tmp/$m.gguf 2>&1 | grep '^| '
done
t && ab 3 f16 "$E" "$N"
el done
