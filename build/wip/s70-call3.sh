#!/bin/sh
# s70-call3.sh (written in session 69, not run): the engine's moe_fs (build/wip/
# s70-moefs.patch: moe.cu's moe_fs_q4_k_q8_0(_2048) and moe_fs_sum, moefs.go behind
# EMBER_CUDA_MOEFS, TestMoEFSQueue, TestMoEFS), if s69-call2's moefs micro wins. Its
# tests on PTX made here from the patched moe.cu, deepseek2's CUDA tests with it on, a
# rotated sweep of V2-Lite tg128 and a timeline of each side. Before the call: git apply
# build/wip/s70-moefs.patch (set MOEFS_CS / MOEFS_DS in moe.cu and moeFSCS in moefs.go to
# the micro's best first); TESTS="cuda deepseek2" sh build/dev-build.sh (it warns that
# the embedded moe.ptx is stale: this call makes it); hold kernels/cuda/*.ptx,
# testdata/vocab and testdata/tokenizers out; carry bin/dev. If it wins: commit
# $L/ptx.tar.xz's moe.ptx (same_bodies must name no other module), the patch, README's
# switch (or the default, by the sweep).
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s70c3}"
ptx_all /tmp/px
same_bodies /tmp/px moe
(sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED") &
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMoEFS|TestMoERouting|TestKernelNamesExist|TestEmbeddedKernelsWait|TestBranchedGraph|TestNormRouter' 300
(cd inference/model/deepseek2 && EMBER_CUDA_MOEFS=1 timeout -s KILL 300 "$R/bin/dev/deepseek2.test" -test.run CUDA 2>&1 | tail -3 | sed 's/^/deepseek2, moe_fs on: /') &
wait
el "tests done; models and timeline PTX ready"
sweep 5 v2 "$E" "EMBER_CUDA_MOEFS=1 $E" 2>&1 | tee "$L/sweep-v2.txt"
unset EMBER_CUDA_PTX_DIR
tl tl_chain.log v2
tl tl_moefs.log v2 EMBER_CUDA_MOEFS=1
grep -E "moe_fs|mmv_route|swiglu_q8 |mmv_id_q8_0|moe_sum" "$L/tl_moefs.log" | head -12
el done
