#!/bin/sh
# s44-call2a.sh (session 44): which module carries s44-call1.sh's evict-first gain.
# Builds PTX dirs from the committed PTX with s44-call1.sh's ef (EMBER_WEVICT=1) moe,
# matmul or mvs PTX (carried in pvx/, from that call's $OUT) swapped in one at a time,
# all three, and nc's moe; V2-Lite (and 8B Q4_K_M where it can differ) tg128, 3 rounds.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/c2a}"
mk() { d=/tmp/v-$1; shift; rm -rf $d; mkdir -p $d; cp kernels/cuda/*.ptx $d/; for m in "$@"; do cp pvx/$m.ptx $d/${m#*-}.ptx; done; }
mk moe ef-moe; mk mm ef-matmul; mk mvs ef-mvs; mk all ef-moe ef-matmul ef-mvs; mk ncmoe nc-moe
wait
t() { q "$E" bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$1.gguf; }
for r in 1 2 3; do
  unset EMBER_CUDA_PTX_DIR; l="r$r emb: v2 $(t v2) q4 $(t q4)"
  for v in moe ncmoe mm mvs all; do export EMBER_CUDA_PTX_DIR=/tmp/v-$v; l="$l | $v: v2 $(t v2)"; [ $v = moe -o $v = ncmoe ] || l="$l q4 $(t q4)"; done
  el "$l"
done
