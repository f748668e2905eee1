#!/bin/sh
# s52-call1.sh: the routed down experts asked of L2 by mmv_route_q4_k once it has routed
# (moe.cu's moe_prefetch, EMBER_CUDA_DOWN_PF), and mv1lo.cuh's comment mended. Local
# steps: sh build/wip/s48-prep.sh 1 (bin/base from HEAD, bin/dev from the tree), cp
# HEAD's moe.cu to bin/dev/moe0.cu; carry bin/dev bin/base; after: s48-prep.sh restore.
# Here: every module's PTX from the tree (/tmp/pn, returned as ptx.tar.xz) and HEAD's
# moe.cu against the tree's headers (moe0.ptx: the PTX to commit if the prefetch loses);
# tests on /tmp/pn; then V2-Lite tg128 rounds: HEAD's binary / pf 0 / 1 / 2 / 5 / 6 / 34.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s52c1}"
ptx_all /tmp/pn
mkdir -p /tmp/pm && cp /tmp/pn/*.cu /tmp/pn/*.cuh /tmp/pm/ && cp bin/dev/moe0.cu /tmp/pm/moe.cu
sh build/ptx-one.sh /tmp/pm moe && cp /tmp/pm/moe.ptx "$L/moe0.ptx"
el "moe0 done: $(grep -c prefetch /tmp/pm/moe.ptx) prefetch lines (want 0), new $(grep -c prefetch /tmp/pn/moe.ptx)"
export EMBER_CUDA_PTX_DIR=/tmp/pn
tgroup 0 'TestMoERouting|TestMMVQueuePairedRuns|KernelNamesExist|EmbeddedKernelsWait|TestTopK|IDW' 150
tgroup 1 'TestConformance$' 150
model_tests 150
wait
el "tests done"
unset EMBER_CUDA_PTX_DIR
base_bin
o() { timeout -s KILL 45 $B bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$1.gguf 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' ' | sed 's/(.*//'; }
b() { m=$1; shift; timeout -s KILL 45 env EMBER_CUDA_PTX_DIR=/tmp/pn "$@" $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' ' | sed 's/(.*//'; }
t() { [ $(($(date +%s) - T0)) -lt 480 ]; }
for r in 1 2 3 4 5 6; do
	t && el "v2 base / pf0 / 1 / 2 / 5 / 6 / 34: $(o v2) / $(b v2 EMBER_CUDA_DOWN_PF=0) / $(b v2 EMBER_CUDA_DOWN_PF=1) / $(b v2 EMBER_CUDA_DOWN_PF=2) / $(b v2 EMBER_CUDA_DOWN_PF=5) / $(b v2 EMBER_CUDA_DOWN_PF=6) / $(b v2 EMBER_CUDA_DOWN_PF=34)"
done
el done
