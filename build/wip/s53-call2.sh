#!/bin/sh
# s53-call2.sh (session 53): every module's PTX made on the H200 for the review changes
# (mmvgen.cuh's warps4_meet and F16/BF16 chunk loop, mv1x.cuh's half_chunk); the mat-vec,
# F32-weight, conformance, golden and deepseek2 tests on it; the final figures (8B and
# V2-Lite Q4_K_M, whose kernels' bodies are unchanged) and 8B F16 tg128 with the
# committed PTX (embedded) against the new one (EMBER_CUDA_PTX_DIR).
# Local steps: bin/dev from HEAD (TESTS="cuda archs deepseek2"), testdata/vocab,
# testdata/tokenizers and kernels/cuda/*.ptx held out of the carry; carry bin/dev.
set -u
export MODELS="q4 v2 f16"
. build/gpu-setup.sh "${OUT:-/tmp/s53c2}"
t() { [ $(($(date +%s) - T0)) -lt 500 ]; }
ptx_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMatVecBatch1|TestF32Weight|TestKernelNamesExist|TestEmbeddedKernelsWait' 200
tgroup 1 'TestConformance$' 200
model_tests 200
wait
grep -E -- '--- (PASS|FAIL)' /tmp/g0.log | head -20
el "tests done"
unset EMBER_CUDA_PTX_DIR
N="EMBER_CUDA_PTX_DIR=/tmp/px $E"
for m in q4 v2; do
	t && el "$m pp512 / tg128 (new PTX, -r 3): $(p env $N bench -backend cuda -p 512 -n 128 -r 3 -m /tmp/$m.gguf)"
done
t && ab 3 f16 "$E" "$N"
for r in 1 2; do
	for m in q4 v2; do
		t && el "$m tg128 committed / new: $(q $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf) / $(q env $N bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf)"
	done
done
el done
