#!/bin/sh
# s68-call1.sh (written in session 67, not yet run): build/wip/s68-half-fma.patch, the
# F16 and BF16 mat-vecs' chunk sums (mv1x.cuh's half_dot8 and half_chunk, which mv1_half
# and mmv_generic share) as fused multiply-adds. A product of two halves is exact in a
# float (two bfloat16s too, unless out of the float's normal range), so the sums keep their bits; 8 of a
# chunk's ~32 issue slots go, and the F16 step was bound partly by its arithmetic
# (session 48: 170 tok/s with double adds against 203). Every module's PTX changes hash
# (mv1x.cuh is in every module's sources hash), so all are made for both sides. Rotated
# tg128 rounds of the 8B in F16 and BF16 (~15 GB each; the models take ~1-2 minutes to
# write) and the tests on the patched PTX. Before the call: TESTS="cuda archs deepseek2" sh
# build/dev-build.sh, hold kernels/cuda/*.ptx, testdata/vocab and testdata/tokenizers
# out; carry bin/dev. If it wins: apply the patch, commit $L/ptx-vH.tar.xz's PTX (made
# from exactly that source), check TestPTXMatchesSources here.
set -u
export MODELS="f16 bf"
. build/gpu-setup.sh "${OUT:-/tmp/s68c1}"
ptx_all /tmp/px
rm -rf /tmp/vH && cp -r /tmp/px /tmp/vH
(cd /tmp/vH && patch -s -p3 <"$R/build/wip/s68-half-fma.patch") || el "PATCH FAILED"
for m in $(cd /tmp/vH && ls *.cu | sed 's/\.cu$//'); do sh build/ptx-one.sh /tmp/vH "$m" & done
wait
(cd /tmp/vH && tar cJf "$L/ptx-vH.tar.xz" *.ptx)
el "variant PTX done; models ready"
sweep 3 f16 "EMBER_CUDA_PTX_DIR=/tmp/px $E" "EMBER_CUDA_PTX_DIR=/tmp/vH $E" >"$L/sweep-f16.txt" 2>&1
cat "$L/sweep-f16.txt"
sweep 3 bf "EMBER_CUDA_PTX_DIR=/tmp/px $E" "EMBER_CUDA_PTX_DIR=/tmp/vH $E" >"$L/sweep-bf.txt" 2>&1
cat "$L/sweep-bf.txt"
export EMBER_CUDA_PTX_DIR=/tmp/vH
all_tests 'TestMatVec|TestF16' >"$L/tests.txt" 2>&1 # + conformance, the goldens, deepseek2's
cat "$L/tests.txt"
unset EMBER_CUDA_PTX_DIR
el done
