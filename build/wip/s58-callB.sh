#!/bin/sh
# s58-callB.sh (session 58, run as one command line after s58-callA.sh on the same
# binaries): TestMLAKVRoPEBits alone for its message, then V2-Lite tg128 six rotated
# rounds: HEAD (s1), the short tile without mla_kv_rope (s2), neither (s3: the old
# tile, HEAD's behaviour on the patched binary), both (s4).
set -u
export MODELS="v2"
. build/gpu-setup.sh /tmp/s58cB
B=$R/bin/base/ember
[ -x "$B" ] || base_bin
[ -s /tmp/px/ops.ptx ] || ptx_all /tmp/px
(cd inference/backend/cuda && EMBER_CUDA_PTX_DIR=/tmp/px timeout 60 "$R/bin/dev/cuda.test" -test.v -test.run TestMLAKVRoPEBits 2>&1 | head -30)
wait
N="EMBER_CUDA_PTX_DIR=/tmp/px $E"
sweep 6 v2 "$B" "EMBER_CUDA_NO_MLA_ROPE=1 $N" "EMBER_CUDA_NO_MLA_ROPE=1 EMBER_CUDA_SHORT_TILE=256 $N" "$N"
el done
