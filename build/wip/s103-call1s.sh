# s103-call1s.sh (session 103): s103-call1.sh without the 8-round A/B, for a call with
# ~400 s of device time: TestMoEQ5PBits (mended) and deepseek2's CUDA tests on the
# embedded PTX, then tg128 -r 3 of the 8B and of V2-Lite (the targets' figures), and
# V2-Lite's -r 3 with the packed downs off. Same preparation as s103-call1.sh.
set -u
MODELS="q4 v2" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
tgroup 0 'TestMoEQ5PBits|TestMMVIDQueueQ5P|TestWiden|TestKernelNamesExist' 120
ds2_tests 120 | tee -a "$OUT/log.txt"
wait
gsum tests 0
cp /tmp/g0.log "$OUT/" 2>/dev/null
while pgrep -f "ember synth" >/dev/null; do sleep 1; done
lg "8B tg128 -r 3 $(tg3 q4_r3 q4)"
lg "V2-Lite tg128 -r 3 $(tg3 v2_r3 v2)"
lg "V2-Lite tg128 -r 3 EMBER_CUDA_Q5P=0 $(EMBER_CUDA_Q5P=0 tg3 v2_r3_off v2)"
lg done
