#!/bin/sh
# s80-call3.sh: s80-call2.sh with every test cut at 100 s, for ~400 s of budget (session 77's plan: build/wip/s77.patch's tests and its two
# sweeps, four rounds each) with the CPU kernels' tests on the GPU machine's Xeon (its
# AVX-512 VNNI, BF16 and AMX paths; session 80's lg_avx512_dec.c) beside the CUDA tests.
# Prepare: git apply build/wip/s77.patch; TESTS="cuda archs deepseek2 cpu" sh
# build/dev-build.sh; hold PTX, vocab, tokenizers out; carry bin/dev.
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s80c3}"
nvidia-smi --query-gpu=name --format=csv,noheader
grep -o -w -E 'avx512_vnni|avx512_bf16|amx_tile|amx_int8|amx_bf16' /proc/cpuinfo | sort -u | tr '\n' ' '
echo
(cd kernels/cpu && timeout -s KILL 100 "$R/bin/dev/cpu.test" 2>&1 | tail -15 | sed 's/^/cpu: /') &
ptx_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMoERouting|TestMoEDownsLateIDs|TestMultiTwoBits|TestIDWBits|TestKernelNamesExist|TestMatMulShared' 100
model_tests 100
unset EMBER_CUDA_PTX_DIR
wait
el "tests done"
P="EMBER_CUDA_PTX_DIR=/tmp/px"
sweep 3 q4 "$P EMBER_CUDA_MULTI_TWO=0 $E" "$P $E" 2>&1 | tee "$L/sweep-q4.txt"
sweep 3 v2 "$P EMBER_CUDA_LATE_IDS=0 $E" "$P $E" "EMBER_CUDA_LATE_IDS=0 $E" 2>&1 | tee "$L/sweep-v2.txt"
el done
