#!/bin/sh
# s77-call1.sh (for session 77): why ROUTE_STAGE lost 6% in s76-call4. The staging
# kernel (f202c03's moe.cu: 43 KB of shared memory and 160 registers a block) against the
# embedded one, alone and with every kernel at one carveout (EMBER_CUDA_CARVEOUT_KERNELS
# all, EMBER_CUDA_CARVEOUT 66: no change of shared memory configuration between kernels,
# session 25's suspect), the embedded kernel at that carveout as the control; then
# TestMoERoutingSmallGrid on the staging PTX. If staging wins at one carveout, the
# loss was the configuration change. Before: git show f202c03:kernels/cuda/moe.cu >
# build/wip/s77-moe-stage.cu (untracked, carried); sh build/dev-build.sh; hold PTX,
# vocab, tokenizers out; carry bin/dev. ~5 minutes.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s77c1}"
nvidia-smi --query-gpu=name --format=csv,noheader
[ -s build/wip/s77-moe-stage.cu ] || { el "no build/wip/s77-moe-stage.cu (see the header)"; exit 1; }
ptx_all /tmp/px
mkdir -p /tmp/ps && cp /tmp/px/*.ptx /tmp/px/*.cu /tmp/px/*.cuh /tmp/ps/ && cp build/wip/s77-moe-stage.cu /tmp/ps/moe.cu &&
	sh build/ptx-one.sh /tmp/ps moe || el "PS FAILED"
wait
C="EMBER_CUDA_CARVEOUT_KERNELS=all EMBER_CUDA_CARVEOUT=66"
sweep 6 v2 "$E" "EMBER_CUDA_PTX_DIR=/tmp/ps $E" "$C EMBER_CUDA_PTX_DIR=/tmp/ps $E" "$C $E" 2>&1 | tee "$L/sweep-v2.txt"
export EMBER_CUDA_PTX_DIR=/tmp/ps
tgroup 0 'TestMoERoutingSmallGrid' 150
unset EMBER_CUDA_PTX_DIR
wait
el done
