#!/bin/sh
# s72-call1.sh (session 72): the three session-70 patches at once (s70-ffn4096, s70-moefs,
# s70-absorb applied; TESTS="cuda deepseek2" sh build/dev-build.sh; PTX, vocab and
# tokenizers held out; carry bin/dev). The micros moefs and qkb died of a misaligned
# address in s72's first call, so this goes straight to the engine forms' own GPU tests
# and sweeps: 8B chain against EMBER_CUDA_FFN=1 (the 4,096 kernels), V2-Lite chain
# against EMBER_CUDA_MOEFS=1, EMBER_CUDA_ABSORB=1 and both.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s72c1}"
ptx_all /tmp/px
same_bodies /tmp/px ffn moe absorb
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestFFN|TestMoEFS|TestAbsorb|TestKernelNamesExist|TestEmbeddedKernelsWait|TestBranchedGraph|TestMoERouting|TestGroupsSpacedBits|TestAttentionLatent|TestNormRouter' 300
(cd inference/model/deepseek2 && EMBER_CUDA_MOEFS=1 timeout -s KILL 300 "$R/bin/dev/deepseek2.test" -test.run CUDA 2>&1 | tail -3 | sed 's/^/deepseek2, moe_fs on: /') &
(cd inference/model/deepseek2 && EMBER_CUDA_ABSORB=1 timeout -s KILL 300 "$R/bin/dev/deepseek2.test" -test.run CUDA 2>&1 | tail -3 | sed 's/^/deepseek2, absorb on: /') &
wait
grep -E -- '^(--- |ok|FAIL|PASS)' /tmp/g0.log | tail -30
cp /tmp/g0.log "$L/g0.log"
el "tests done; models ready"
sweep 5 q4 "$E" "EMBER_CUDA_FFN=1 $E" 2>&1 | tee "$L/sweep-q4.txt"
sweep 5 v2 "$E" "EMBER_CUDA_MOEFS=1 $E" "EMBER_CUDA_ABSORB=1 $E" "EMBER_CUDA_MOEFS=1 EMBER_CUDA_ABSORB=1 $E" 2>&1 | tee "$L/sweep-v2.txt"
unset EMBER_CUDA_PTX_DIR
(sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED")
tl tl_v2_chain.log v2
tl tl_v2_both.log v2 EMBER_CUDA_MOEFS=1 EMBER_CUDA_ABSORB=1
grep -E "moe_fs|absorb|mmv_route|swiglu_q8 |mmv_id_q8_0|moe_sum" "$L/tl_v2_both.log" | head -12
el done
