#!/bin/sh
# s47-call1.sh (written in session 46): two changes for V2-Lite's batch-1 decode, on one
# PTX set made here ($OUT/ptx.tar.xz, every module: common.cuh's comment changes every
# hash; bodies should change only in matmul.ptx, new mmv_idp_* entries, and moe.ptx):
# - idpre.patch: the routed downs on mmv_idp_* read their experts' ids and first weights
#   before the wait (the ids were written two launches back; idp.go); off with
#   EMBER_CUDA_NO_IDPRE=1. Expected: the downs' first-load latency (~1 us a layer)
#   behind the SwiGLU's launch.
# - topk-rank.patch (sessions 43, 45, 46: even within noise in seven pairs): here with
#   ab's paired rounds.
# /tmp/pxi is the same PTX with HEAD's moe.cu (build/wip/moe-head.cu): idp only.
# Tests on /tmp/px: TestIDPreBits (new), the MoE routing, product and name tests,
# conformance, goldens, deepseek2 (test binaries from the patched tree). Then ab
# (gpu-setup.sh): committed (bin/base/ember, HEAD on its embedded PTX) / both, 8 rounds;
# idp only with EMBER_CUDA_NO_IDPRE=1 / without, 6 rounds; the 8B once. bin/dev/ember
# needs the call's PTX (it launches mmv_idp_*, which the embedded PTX lacks). Carry
# bin/dev and bin/base (s47-prep.sh 1).
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s47c1}"
ptx_all /tmp/px
rm -rf /tmp/pxi && cp -r /tmp/px /tmp/pxi && cp build/wip/moe-head.cu /tmp/pxi/moe.cu && sh build/ptx-one.sh /tmp/pxi moe && el "pxi done"
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'IDPreBits|MoERouting|MMVQueuePaired|KernelNamesExist|EmbeddedKernelsWait|Widen|IDW|MatVec' 300
tgroup 1 'Conformance' 300
model_tests 300
wait
el "tests done"
unset EMBER_CUDA_PTX_DIR
base_bin
N="EMBER_CUDA_PTX_DIR=/tmp/px $E"
I="EMBER_CUDA_PTX_DIR=/tmp/pxi $E"
ab 8 v2 "$B" "$N"
ab 6 v2 "EMBER_CUDA_NO_IDPRE=1 $I" "$I"
el "q4 tg128 both/committed: $(q env $N bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/q4.gguf) / $(q $B bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/q4.gguf)"
