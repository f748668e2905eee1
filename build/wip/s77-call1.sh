#!/bin/sh
# s77-call1.sh (written in session 77, which was lent no device; not yet run): with
# build/wip/s77.patch applied,
# (a) every module's PTX made on the device (moe.cu without the redundant warp sync;
#     matmul.cu's mmv_idw reading ids, mmv_multi's MULTI_TWO), back in ptx.tar.xz;
# (b) the routing, late-ids, multi-two and head-run tests, the goldens and deepseek2's
#     CUDA tests on it;
# (c) 8B Q4_K_M tg128, five rounds: the device PTX with EMBER_CUDA_MULTI_TWO=0 (Q/K/V at
#     448 blocks where V is Q6_K) against the default (384: one wave);
# (d) V2-Lite tg128, five rotated rounds (session 47's idpre again: even then): s1 the device PTX with the downs on mmv_id
#     (EMBER_CUDA_LATE_IDS=0), s2 the device PTX (downs on mmv_idw: ids and first
#     weights before the wait), s3 the embedded PTX (late ids off: the committed kernels;
#     with them on, the old mmv_idw would ignore the ids);
# (e) last, cut by the time limit if need be: session 76's ROUTE_STAGE kernel (f202c03's
#     moe.cu) against the device PTX, both with every kernel at one carveout
#     (EMBER_CUDA_CARVEOUT_KERNELS=all EMBER_CUDA_CARVEOUT=66).
# Before: git apply build/wip/s77.patch; git show f202c03:kernels/cuda/moe.cu >
# build/wip/s77-moe-stage.cu (untracked, carried); sh build/dev-build.sh (its stale-PTX
# warning is expected); hold PTX, vocab, tokenizers out; carry bin/dev; timeout_s 600.
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s77c1}"
nvidia-smi --query-gpu=name --format=csv,noheader
ptx_all /tmp/px
mkdir -p /tmp/ps && cp /tmp/px/*.ptx /tmp/px/*.cu /tmp/px/*.cuh /tmp/ps/ && cp build/wip/s77-moe-stage.cu /tmp/ps/moe.cu &&
	(sh build/ptx-one.sh /tmp/ps moe >/dev/null 2>&1 || el "PS FAILED") &
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMoERouting|TestMoEDownsLateIDs|TestMultiTwoBits|TestIDWBits|TestKernelNamesExist|TestMatMulShared' 240
model_tests 240
unset EMBER_CUDA_PTX_DIR
wait
el "tests done"
P="EMBER_CUDA_PTX_DIR=/tmp/px"
sweep 5 q4 "$P EMBER_CUDA_MULTI_TWO=0 $E" "$P $E" 2>&1 | tee "$L/sweep-q4.txt"
sweep 5 v2 "$P EMBER_CUDA_LATE_IDS=0 $E" "$P $E" "EMBER_CUDA_LATE_IDS=0 $E" 2>&1 | tee "$L/sweep-v2.txt"
C="EMBER_CUDA_CARVEOUT_KERNELS=all EMBER_CUDA_CARVEOUT=66"
sweep 4 v2 "$C $P $E" "$C EMBER_CUDA_PTX_DIR=/tmp/ps $E" 2>&1 | tee "$L/sweep-stage.txt"
el done
