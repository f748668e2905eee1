#!/bin/sh
# s70-call4.sh (written in session 69, not run): the engine's absorbed query in one
# launch (build/wip/s70-absorb.patch: kernels/cuda/absorb.cu, a new module; absorb.go
# behind EMBER_CUDA_ABSORB; TestAbsorbQueue; TestAbsorbBits, the chain's bits), if
# s69-call2's qkb micro wins. Its tests on PTX made here, deepseek2's CUDA tests and the
# CUDA goldens with it on, a rotated V2-Lite sweep and both timelines. Before the call:
# git apply build/wip/s70-absorb.patch (it carries an absorb.ptx made by nvcc 12.4, so
# that the binary embeds the module; this call makes the H200's); TESTS="cuda archs
# deepseek2" sh build/dev-build.sh; hold kernels/cuda/*.ptx, testdata/vocab and
# testdata/tokenizers out; carry bin/dev. If it wins: commit $L/ptx.tar.xz's absorb.ptx
# in place of the patch's (same_bodies must name no other module), then make it the
# default (it keeps the bits) with a switch to turn it off.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s70c4}"
ptx_all /tmp/px
same_bodies /tmp/px absorb
(sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED") &
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestAbsorb|TestGroupsSpacedBits|TestKernelNamesExist|TestEmbeddedKernelsWait|TestBranchedGraph|TestAttentionLatent' 300
(cd inference/model/deepseek2 && EMBER_CUDA_ABSORB=1 timeout -s KILL 300 "$R/bin/dev/deepseek2.test" -test.run CUDA 2>&1 | tail -3 | sed 's/^/deepseek2, absorb on: /') &
(cd inference/model/archs && EMBER_CUDA_ABSORB=1 timeout -s KILL 300 "$R/bin/dev/archs.test" -test.run TestGoldensCUDA 2>&1 | tail -3 | sed 's/^/goldens, absorb on: /') &
wait
el "tests done; models and timeline PTX ready"
sweep 5 v2 "$E" "EMBER_CUDA_ABSORB=1 $E" 2>&1 | tee "$L/sweep-v2.txt"
unset EMBER_CUDA_PTX_DIR
tl tl_chain.log v2
tl tl_absorb.log v2 EMBER_CUDA_ABSORB=1
grep -E "absorb|mmv_q4_k_1e|quant_q8 |mmv_idw_q8_0|attention_short576|mla_kv" "$L/tl_absorb.log" | head -12
el done
