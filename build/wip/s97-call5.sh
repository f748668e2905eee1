# s97-call5.sh (session 97): absorb_q4_k_q8_0 without its two GPU-scope MEMBARs (ptxas
# makes barrier.cluster.arrive.release a MEMBAR.ALL.GPU; s97-call4's ncu put 19% of the
# kernel's stall cycles on membar): each block's 16 q_nope values go into every block's
# xs by st.async, counted on that block's mbarrier. Every module's PTX and the sm_90
# cubins (brought back), TestAbsorbBits and deepseek2's CUDA tests on them, then V2-Lite
# Q4_K_M tg128 against the embedded kernels, rotated rounds. Before it: TESTS="cuda
# deepseek2" sh build/dev-build.sh; the plain hold-out; carry bin/dev.
set -u
MODELS="v2" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
ptx_all /tmp/px
cubin_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestAbsorb' 90
(cd inference/model/deepseek2 && timeout -s KILL 90 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3 | sed 's/^/deepseek2: /' >>"$OUT/log.txt") &
wait
gsum tests 0
unset EMBER_CUDA_PTX_DIR
sweep 4 v2 "$E" "EMBER_CUDA_PTX_DIR=/tmp/px $E" 2>&1 | tee -a "$OUT/log.txt"
lg done
