#!/bin/sh
# s75-call3.sh (session 75): warp 0 of mmv_route also loading its first task by the
# guess before it routes (moe.cu's ROUTE_W0 1; 168 registers, no spills with nvcc 12.4),
# beside warps 1-3's two tasks (the default since ecb90f5). PTX of moe.cu with ROUTE_W0
# 1 as its default (/tmp/pw, returned as moe-w0.ptx) and of the source as it is
# (/tmp/px, ROUTE_W0 0; the int form of pre). TestMoERouting on /tmp/pw; V2-Lite tg128
# sweep: the committed binary's embedded PTX, /tmp/px, /tmp/pw. Before: sh
# build/dev-build.sh at HEAD (the embedded PTX is the committed one), then git apply
# build/wip/s75-w0.patch; hold PTX, vocab, tokenizers out; carry bin/dev.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s75c3}"
ptx_all /tmp/px
mkdir -p /tmp/pw && cp /tmp/px/*.ptx kernels/cuda/*.cuh /tmp/pw/ &&
	sed 's/^#define ROUTE_W0 0 /#define ROUTE_W0 1 /' kernels/cuda/moe.cu >/tmp/pw/moe.cu &&
	grep -q '^#define ROUTE_W0 1 ' /tmp/pw/moe.cu && sh build/ptx-one.sh /tmp/pw moe &&
	cp /tmp/pw/moe.ptx "$L/moe-w0.ptx" || el "PW FAILED"
export EMBER_CUDA_PTX_DIR=/tmp/pw
tgroup 0 'TestMoERouting$|TestKernelNamesExist' 200
model_tests 200
wait
cp /tmp/g0.log "$L/"
el "tests done"
unset EMBER_CUDA_PTX_DIR
sweep 6 v2 "$E" "EMBER_CUDA_PTX_DIR=/tmp/px $E" "EMBER_CUDA_PTX_DIR=/tmp/pw $E" 2>&1 | tee "$L/sweep-v2.txt"
el done
