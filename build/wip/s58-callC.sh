#!/bin/sh
# s58-callC.sh (session 58): build/wip/mla-rope.patch alone (s58-callA/B found the
# short-tile patch 4% slower on V2-Lite: dropped), on the ops.ptx s58-callA.sh made on
# the H200 (embedded). TestMLAKVRoPEBits failed in s58-callA.sh without its message in
# the log: run it alone with its output; then V2-Lite tg128 six rotated rounds (HEAD's
# binary, patched, patched with EMBER_CUDA_NO_MLA_ROPE=1) and the 8B three (HEAD,
# patched: rope2_set's PTX changed). The fourth V2 side re-checks attention_short against
# attention_mla (EMBER_CUDA_NO_SHORT=1) on today's chain: the short tile's loss hints
# that co-residence with the product before it matters.
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s58cC}"
B=$R/bin/base/ember
[ -x "$B" ] || base_bin
(cd inference/backend/cuda && timeout -s KILL 120 "$R/bin/dev/cuda.test" -test.v -test.run 'TestMLAKVRoPE' >/tmp/mr.log 2>&1; echo "rc $?" >>/tmp/mr.log)
grep -v '^=== ' /tmp/mr.log | head -40
wait
sweep 6 v2 "$B" "$E" "EMBER_CUDA_NO_MLA_ROPE=1 $E" "EMBER_CUDA_NO_SHORT=1 $E"
sweep 3 q4 "$B" "$E"
el done
