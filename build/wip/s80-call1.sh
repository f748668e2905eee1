#!/bin/sh
# s80-call1.sh: s79-call1.sh (session 77's plan: build/wip/s77.patch's tests and its two
# sweeps, four rounds each) with the CPU kernels' tests on the GPU machine's Xeon (its
# AVX-512 VNNI, BF16 and AMX paths; session 80's lg_avx512_dec.c) beside the CUDA tests.
# ROUNDS (default 4) sets the rounds of each sweep, TLIM (default 200) the seconds each
# test binary may run (sessions 80-81 also sent ROUNDS=3 TLIM=150 and TLIM=100 for
# smaller budgets).
# Prepare: git apply build/wip/s77.patch; TESTS="cuda archs deepseek2 cpu" sh
# build/dev-build.sh; hold PTX, vocab, tokenizers out; carry bin/dev.
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s80c1}"
nvidia-smi --query-gpu=name --format=csv,noheader
grep -o -w -E 'avx512_vnni|avx512_bf16|amx_tile|amx_int8|amx_bf16' /proc/cpuinfo | sort -u | tr '\n' ' '
echo
(cd kernels/cpu && timeout -s KILL "${TLIM:-200}" "$R/bin/dev/cpu.test" 2>&1 | tail -15 | sed 's/^/cpu: /') &
ptx_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMoERouting|TestMoEDownsLateIDs|TestMultiTwoBits|TestIDWBits|TestKernelNamesExist|TestMatMulShared' "${TLIM:-200}"
model_tests "${TLIM:-200}"
unset EMBER_CUDA_PTX_DIR
wait
el "tests done"
P="EMBER_CUDA_PTX_DIR=/tmp/px"
sweep "${ROUNDS:-4}" q4 "$P EMBER_CUDA_MULTI_TWO=0 $E" "$P $E" 2>&1 | tee "$L/sweep-q4.txt"
sweep "${ROUNDS:-4}" v2 "$P EMBER_CUDA_LATE_IDS=0 $E" "$P $E" "EMBER_CUDA_LATE_IDS=0 $E" 2>&1 | tee "$L/sweep-v2.txt"
el done
