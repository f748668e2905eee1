# s103-call1.sh (written in session 102 for the next session's first call): the
# committed tree's kernels, embedded (no EMBER_CUDA_PTX_DIR). First the re-run session
# 102 could not make: TestMoEQ5PBits as mended (widening on), TestMMVIDQueueQ5P, the
# widening tests and deepseek2's CUDA tests; then V2-Lite tg128 8 rotated rounds, the
# packed downs (default) against EMBER_CUDA_Q5P=0; then the targets' figures, tg128 -r 3
# of the 8B and of V2-Lite. Before it: TESTS="cuda deepseek2" sh build/dev-build.sh;
# cp build/wip/hold.sh /tmp/ && /tmp/hold.sh out; carry bin/dev (~62 MB in all).
set -u
MODELS="q4 v2" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
tgroup 0 'TestMoEQ5PBits|TestMMVIDQueueQ5P|TestWiden|TestKernelNamesExist' 150
ds2_tests 150 | tee -a "$OUT/log.txt"
wait
gsum tests 0
cp /tmp/g0.log "$OUT/" 2>/dev/null
while pgrep -f "ember synth" >/dev/null; do sleep 1; done
lg "models: $(ls -l /tmp/q4.gguf /tmp/v2.gguf 2>&1 | tr '\n' ' ')"
tg1 v2 "$E" >/dev/null
sweep 8 v2 "EMBER_CUDA_Q5P=0 $E" "$E" 2>&1 | tee -a "$OUT/log.txt"
lg "8B tg128 -r 3 $(tg3 q4_r3 q4)"
lg "V2-Lite tg128 -r 3 $(tg3 v2_r3 v2)"
lg done
