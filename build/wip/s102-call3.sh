# s102-call3.sh (session 102): s103-call1.sh's tests alone, for a call with little
# device time left: TestMoEQ5PBits (mended), TestMMVIDQueueQ5P, the widening tests and
# deepseek2's CUDA tests on the embedded PTX, the packed downs on by default.
set -u
MODELS=" " . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
tgroup 0 'TestMoEQ5PBits|TestMMVIDQueueQ5P|TestWiden|TestKernelNamesExist' 110
ds2_tests 110 | tee -a "$OUT/log.txt"
wait
gsum tests 0
cp /tmp/g0.log "$OUT/" 2>/dev/null
lg done
