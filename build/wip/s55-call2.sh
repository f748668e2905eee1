#!/bin/sh
# s55-call2.sh (session 55): build/wip/sumadd-k.patch timed. V2-Lite tg128 A/B on one
# binary: A the committed PTX (embedded), B s55-call1.sh's PTX (carried as bin/pb/ptx.tar.xz,
# EMBER_CUDA_PTX_DIR), six rounds, then six with each round's order swapped.
# Local steps: bin/dev as for s55-call1.sh; its ptx.tar.xz copied into bin/pb; carry
# bin/dev and bin/pb.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s55c2}"
t() { [ $(($(date +%s) - T0)) -lt 430 ]; }
wait
mkdir -p /tmp/pc && tar xJf bin/pb/ptx.tar.xz -C /tmp/pc
N="EMBER_CUDA_PTX_DIR=/tmp/pc $E"
t && ab 6 v2 "$E" "$N"
t && ab 6 v2 "$N" "$E"
el done
