# s98-call2.sh (session 98): mmv_idsum_q8_0 (moesum.cu: a decode token's routed Q8_0
# downs and their weighted sum in one launch, moe_sum_add's Add joining it) against
# EMBER_CUDA_IDSUM=0 (mmv_id_q8_0 + moe_sum_add) and its r1 form. Every module's PTX and
# the sm_90 cubins made here (brought back), the routing tests and deepseek2's CUDA
# tests on them, V2-Lite in rotated rounds, then both targets' tg128 -r 3 with the
# card's clocks sampled. Before it: TESTS="cuda deepseek2" sh build/dev-build.sh; the
# plain hold-out; carry bin/dev.
set -u
MODELS="v2 q4" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
ptx_all /tmp/px
cubin_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMoERouting$' 200
tgroup 1 'TestMoERoutingIDSumR1|TestMoERoutingNoGuess' 200
ds2_tests 200 >>"$OUT/log.txt"
wait
gsum tests 0 1
cp /tmp/g0.log /tmp/g1.log "$OUT/" 2>/dev/null
while pgrep -f "ember synth" >/dev/null; do sleep 1; done
N="EMBER_CUDA_PTX_DIR=/tmp/px $E"
sweep 4 v2 "EMBER_CUDA_IDSUM=0 $N" "$N" "EMBER_CUDA_IDSUM=r1 $N" 2>&1 | tee -a "$OUT/log.txt"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -lms 100 >"$OUT/clocks.csv" 2>&1 &
CK=$!
lg "8B tg128 -r 3 $(tg3 q4 q4)"
lg "V2-Lite tg128 -r 3 $(tg3 v2 v2)"
kill $CK
lg done
