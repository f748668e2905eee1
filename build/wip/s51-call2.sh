#!/bin/sh
# s51-call2.sh: call 1 (s51-call1.sh) ran past its 600 s with its output lost (its
# tail held it); its PTX (lo-splitk + q4k-r2, before matmul.cu's split) came back and is
# carried as bin/dev/px51.tar.xz. Here: every module's PTX of the tree (the split, the
# comment) made in the background beside the synthetic models and the tests on the
# carried PTX; then tg128 rounds, base (committed) / new / new at four Q4_K rows, while
# the clock allows; output to $OUT/log as it goes.
set -u
export MODELS="q4 v2 q40 q41"
. build/gpu-setup.sh "${OUT:-/tmp/s51c2}"
mkdir -p /tmp/px51 && tar xf bin/dev/px51.tar -C /tmp/px51
(ptx_all /tmp/pn) &
export EMBER_CUDA_PTX_DIR=/tmp/px51
tgroup 0 'TestMatVec|DenseEvict|KernelNamesExist|EmbeddedKernelsWait|RunKernelWeights|IDW|MMVQueue|MatMulShared|MV1xQueue|FusedDecoderLayers|RowsPerBlock|Q4KTwoRows' 170
tgroup 1 'TestConformance$' 170
model_tests 170
wait
el "tests and PTX done"
for f in /tmp/pn/*.ptx; do
	m=$(basename $f)
	tail -n +2 $f >/tmp/ba; tail -n +2 /tmp/px51/$m >/tmp/bb
	cmp -s /tmp/ba /tmp/bb || el "new PTX body differs from call 1's: $m"
done
base_bin
b() { d=$1 m=$2; shift 2; timeout -s KILL 45 env EMBER_CUDA_PTX_DIR=$d "$@" $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' '; }
o() { timeout -s KILL 45 $B bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$1.gguf 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' '; }
t() { [ $(($(date +%s) - T0)) -lt 500 ]; }
for r in 1 2 3 4; do
	t && el "q4 base / new / four rows: $(o q4) / $(b /tmp/px51 q4) / $(b /tmp/px51 q4 EMBER_CUDA_Q4K_ROWS=4)"
	t && el "v2 base / new / four rows: $(o v2) / $(b /tmp/px51 v2) / $(b /tmp/px51 v2 EMBER_CUDA_Q4K_ROWS=4)"
	t && el "q40 base / new: $(o q40) / $(b /tmp/px51 q40)"
	t && el "q41 base / new: $(o q41) / $(b /tmp/px51 q41)"
done
el done
