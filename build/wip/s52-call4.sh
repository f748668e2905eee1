#!/bin/sh
# s52-call4.sh: mmv_f32_1w (matmul.cu), one row's F32 weight product with its weights
# loaded before the wait (a MoE router's). Local steps: TESTS="cuda deepseek2" sh
# build/dev-build.sh, the vocab, tokenizers and PTX held out (s45-prep.sh's hold);
# carry bin/dev. Here: every module's PTX (/tmp/pn, returned); the F32, MoE, name and
# PDL tests and deepseek2's CUDA tests on it; V2-Lite tg128, EMBER_CUDA_F32W 0 / 1.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s52c4}"
ptx_all /tmp/pn
export EMBER_CUDA_PTX_DIR=/tmp/pn
tgroup 0 'TestF32Weight|TestMoERouting|KernelNamesExist|EmbeddedKernelsWait' 90
(cd inference/model/deepseek2 && timeout -s KILL 90 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3 | sed 's/^/deepseek2: /') &
wait
el "tests done"
t() { [ $(($(date +%s) - T0)) -lt 210 ]; }
for r in 1 2 3 4 5 6; do
	t && el "v2 F32W 0 / 1: $(q env EMBER_CUDA_F32W=0 $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/v2.gguf) / $(q $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/v2.gguf)"
done
el done
