#!/bin/sh
# s53-call1.sh (written in session 52, not yet run): the GPU tests session 52's last
# call could not finish on the committed PTX (mmv_f32_1w's matmul.ptx): TestMoERouting
# and TestF32WeightRow, conformance, the CUDA goldens and deepseek2's CUDA tests, each
# group alone on the GPU; then V2-Lite and 8B Q4_K_M tg128 with EMBER_CUDA_F32W 0 / 1.
# Local steps: TESTS="cuda archs deepseek2" sh build/dev-build.sh with the vocab,
# tokenizers and PTX held out (s45-prep.sh 1 does both from a clean tree); carry bin/dev;
# after: s45-prep.sh restore.
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s53c1}"
tgroup 0 'TestMoERouting|TestF32Weight|KernelNamesExist' 200
wait
model_tests 200
wait
tgroup 1 'TestConformance$' 150
wait
el "tests done"
t() { [ $(($(date +%s) - T0)) -lt 520 ]; }
for r in 1 2 3 4; do
	t && el "v2 F32W 0 / 1: $(q env EMBER_CUDA_F32W=0 $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/v2.gguf) / $(q $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/v2.gguf)"
	t && el "q4 F32W 0 / 1: $(q env EMBER_CUDA_F32W=0 $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/q4.gguf) / $(q $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/q4.gguf)"
done
el done
