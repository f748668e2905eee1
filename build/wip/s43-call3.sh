#!/bin/sh
# s43-call3.sh: why did q5pack (Q5_0 rows packed) not gain in call 1 (577 against 585)?
# ncu's per-kernel durations of one V2-Lite decode step (profile-cuda.sh), main's binary
# (bin/base, its embedded PTX) against the q5pack-idwq build (bin/dev/ember with
# EMBER_CUDA_NO_IDWQ=1, on call 1's PTX carried as bin/dev/ptx.tar.xz).
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s43c3}"
xz -d -f bin/base/ember.xz && chmod +x bin/base/ember
mkdir -p /tmp/px && tar xf bin/dev/ptx.tar -C /tmp/px # gpu-setup.sh unpacked the .xz
wait
[ -n "${NOMAIN:-}" ] || sh build/profile-cuda.sh "$R/bin/base/ember" /tmp/v2.gguf "$L/main" -p 0 -n 16 >/dev/null 2>&1 || el "profile main failed"
EMBER_CUDA_NO_IDWQ=1 EMBER_CUDA_PTX_DIR=/tmp/px sh build/profile-cuda.sh "$E" /tmp/v2.gguf "$L/pack" -p 0 -n 16 >/dev/null 2>&1 || el "profile pack failed"
for d in main pack; do echo "== $d"; head -24 "$L/$d/summary.txt"; done
el done
