#!/bin/sh
# s70-call2.sh (written in session 69, not run): the engine's ffn with session 69's ffs2
# fixes (build/wip/s70-ffn4096.patch: 16-byte DSMEM reads, rows of 4,096 on kernels
# compiled for that width, ffn_sum's loads in registers), if s69-call2's ffs2 figures
# (V13: 1 + 4 + 8) close the ~1.6 us to session 68's first form. Before the call: git
# apply build/wip/s70-ffn4096.patch; TESTS=cuda sh build/dev-build.sh (it warns that the
# embedded ffn.ptx is stale: this call makes it); hold kernels/cuda/*.ptx, testdata/vocab
# and testdata/tokenizers out; carry bin/dev. If it wins: commit $L/ptx.tar.xz's ffn.ptx
# (check same_bodies' output: only ffn.ptx may differ), make ffn the default or keep the
# switch by the sweep's figures.
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s70c2}"
ptx_all /tmp/px
same_bodies /tmp/px ffn
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestFFN|TestKernelNamesExist|TestEmbeddedKernelsWait' 300
wait
cat /tmp/g0.log | grep -E -- '^(--- |ok|FAIL|PASS)|ffn' | tail -20
wait
el "models ready"
sweep 5 q4 "$E" "EMBER_CUDA_FFN=1 $E" 2>&1 | tee "$L/sweep-q4.txt"
unset EMBER_CUDA_PTX_DIR
el done
