#!/bin/sh
# s52-call2.sh: one token's routed Q8_0 downs and their weighted sum plus the shared
# experts' output in one launch (moe.cu's mmv_ids_q8_0, fuse_ops.go's fuseDownSum,
# EMBER_CUDA_DOWN_SUM). Local steps: sh build/wip/s48-prep.sh 1; carry bin/dev bin/base;
# after: s48-prep.sh restore. Here: every module's PTX from the tree (/tmp/pn, returned
# as ptx.tar.xz); the MoE, queue, name and PDL tests, conformance, the goldens and
# deepseek2's CUDA tests on it; then V2-Lite tg128 rounds: HEAD's binary / DOWN_SUM 0 /
# 1 / 2.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s52c2}"
ptx_all /tmp/pn
export EMBER_CUDA_PTX_DIR=/tmp/pn
tgroup 0 'TestMoERouting|TestDownSumQueue|TestMMVQueue|KernelNamesExist|EmbeddedKernelsWait|TestRowsPerBlock|TestFusedDecoderLayers' 170
tgroup 1 'TestConformance$' 170
model_tests 170
wait
el "tests done"
unset EMBER_CUDA_PTX_DIR
base_bin
o() { timeout -s KILL 45 $B bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$1.gguf 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' ' | sed 's/(.*//'; }
b() { m=$1; shift; timeout -s KILL 45 env EMBER_CUDA_PTX_DIR=/tmp/pn "$@" $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' ' | sed 's/(.*//'; }
t() { [ $(($(date +%s) - T0)) -lt 470 ]; }
for r in 1 2 3 4 5 6 7 8; do
	t && el "v2 base / ds0 / ds1 / ds2: $(o v2) / $(b v2 EMBER_CUDA_DOWN_SUM=0) / $(b v2 EMBER_CUDA_DOWN_SUM=1) / $(b v2 EMBER_CUDA_DOWN_SUM=2)"
done
timeout -s KILL 60 env EMBER_CUDA_PTX_DIR=/tmp/pn EMBER_CUDA_DOWN_SUM=1 $E run -backend cuda -m /tmp/v2.gguf -n 24 -temp 0 -p "Hello" 2>/dev/null | md5sum | sed 's/^/ds1 run: /'
timeout -s KILL 60 $B run -backend cuda -m /tmp/v2.gguf -n 24 -temp 0 -p "Hello" 2>/dev/null | md5sum | sed 's/^/base run: /'
el done
