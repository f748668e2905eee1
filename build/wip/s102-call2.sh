# s102-call2.sh (session 102): the packed Q5_0 downs on by default, their PTX and cubins
# embedded (call 1's, build/wip/s102-call1/): TestMoEQ5PBits (mended: it sets
# EMBER_CUDA_WIDEN=1, which TestMain turns off), the widening and kernel-name tests,
# deepseek2's CUDA tests; then V2-Lite tg128 -r 3 with the default and with
# EMBER_CUDA_Q5P=0, rotated. Before it: TESTS="cuda deepseek2" sh build/dev-build.sh;
# the plain hold-out; carry bin/dev.
set -u
MODELS="v2" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
tgroup 0 'TestMoEQ5PBits|TestMMVIDQueueQ5P|TestWiden|TestKernelNamesExist' 150
ds2_tests 150 | tee -a "$OUT/log.txt"
wait
gsum tests 0
cp /tmp/g0.log "$OUT/" 2>/dev/null
while pgrep -f "ember synth" >/dev/null; do sleep 1; done
lg "V2-Lite tg128 -r 3 (EMBER_CUDA_Q5P=0) $(export EMBER_CUDA_Q5P=0; tg3 v2_off v2)"
lg "V2-Lite tg128 -r 3 (default) $(tg3 v2_r3 v2)"
lg done
