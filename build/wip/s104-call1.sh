# s104-call1.sh (session 104): (1) every module's PTX made again by nvcc 13.0 from the
# tree's sources (mv1.cuh's mv1_pair fold: mv1_q8_0 and mv1_q5p one pipeline, q8_pair_acc
# shared with mvs_q8_0; nvcc 12.4 here gives bodies equal to the committed ones for every
# module but mvs) and its sm_90 cubins, returned as ptx.tar.xz and sm90.tar.xz; (2) the
# tests that cover those kernels on that PTX (EMBER_CUDA_PTX_DIR) and deepseek2's CUDA
# tests; (3) s103-call3's question: V2-Lite tg128, 6 rotated rounds, GOGC=off against
# the default; (4) the targets' tg128 -r 3. Before it: TESTS="cuda deepseek2" sh
# build/dev-build.sh; cp build/wip/hold.sh /tmp/ && /tmp/hold.sh out; carry bin/dev.
# Six files come back (log.txt, g0.log, ptx.tar.xz, sm90.tar.xz, q4_r3.txt, v2_r3.txt).
set -u
MODELS="q4 v2" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
lg "$(nvcc --version | tail -2 | head -1)"
ptx_all /tmp/px | tee -a "$OUT/log.txt"
(cubin_all /tmp/px; el "cubins done") >>"$OUT/log.txt" 2>&1 &
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMoEQ5PBits|TestMMVIDQueueQ5P|TestWiden|TestKernelNamesExist|TestMatVecStreamed|TestFusedAddRMSNormMVS|TestMatVecBatch1|TestMatMulSharedQ8_0|TestConformance$|TestIDWBits|TestAbsorbBits|TestGraphReplay' 240
ds2_tests 240 | tee -a "$OUT/log.txt"
wait
unset EMBER_CUDA_PTX_DIR
gsum tests 0
cp /tmp/g0.log "$OUT/" 2>/dev/null
while pgrep -f "ember synth" >/dev/null; do sleep 1; done
lg "models: $(ls -l /tmp/q4.gguf /tmp/v2.gguf 2>&1 | tr '\n' ' ')"
tg1 v2 "$E" >/dev/null
sweep 6 v2 "$E" "GOGC=off $E" 2>&1 | tee -a "$OUT/log.txt"
lg "V2-Lite tg128 -r 3 $(tg3 v2_r3 v2)"
lg "8B tg128 -r 3 $(tg3 q4_r3 q4)"
lg done
