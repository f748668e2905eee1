#!/bin/sh
# s35-call7.sh: mmv_f32_1w (matmul.cu: one row by an F32 weight, a router, with its
# first loads before the PDL wait; EMBER_CUDA_NO_F32W=1 is mmv_f32_1 as before);
# matmul.ptx made (every module into $OUT/ptx.tar.xz); TestF32WBits, TestMoERouting,
# TestIDWBits and the kernel-name check, deepseek2's CUDA tests on it; V2-Lite tg128
# with and without, alternating. bin/dev built with TESTS="cuda deepseek2". ~3 minutes.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s35c7}"
D=/tmp/pv
ptx_all $D
export EMBER_CUDA_PTX_DIR=$D
tgroup 0 'TestF32WBits|TestMoERouting|TestIDWBits|TestKernelNamesExist' 150
(cd inference/model/deepseek2 && timeout -s KILL 150 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -2) &
wait
el tests done
B="bench -backend cuda -p 0 -n 128 -r 3"
for r in 1 2 3; do
	el "round $r V2-Lite: f32w $(q "$E" $B -m /tmp/v2.gguf) | f32 $(EMBER_CUDA_NO_F32W=1 q "$E" $B -m /tmp/v2.gguf)"
done
