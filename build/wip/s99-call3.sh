# s99-call3.sh (session 99, the last ~280 s of device time): s98-call3.sh (mmv_idsum_q8_0
# timed against EMBER_CUDA_IDSUM=0 and r1, V2-Lite tg128 in rotated rounds, on the
# embedded PTX from nvcc 12.4 here) with the routing tests' idsum checks run while the
# model is written. Before it: idsum.patch applied, TESTS="cuda deepseek2"
# sh build/dev-build.sh; the plain hold-out; carry bin/dev.
set -u
MODELS="v2" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
tgroup 0 'TestMoERouting$|TestMoERoutingIDSumR1' 100
wait
gsum tests 0
cp /tmp/g0.log "$OUT/" 2>/dev/null
while pgrep -f "ember synth" >/dev/null; do sleep 1; done
sweep 2 v2 "EMBER_CUDA_IDSUM=0 $E" "$E" "EMBER_CUDA_IDSUM=r1 $E" 2>&1 | tee -a "$OUT/log.txt"
lg done
