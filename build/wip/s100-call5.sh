# s100-call5.sh (session 100): HEAD's embedded kernels (moe_slot_sum and argmax_f32_c in):
# argmax_f32_c against EMBER_CUDA_ARGMAX_ONE=1 again in 8 rotated rounds of V2-Lite and 4
# of the 8B (call 4's 2.4% on V2-Lite is more than the argmax alone should save), then
# timelines of both (tg64's 40th batch, build/timeline-ptx.sh) for where a step goes
# now. Before it: TESTS="cuda" sh build/dev-build.sh; the plain hold-out; carry bin/dev.
set -u
MODELS="v2 q4" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
(sh build/timeline-ptx.sh /tmp/tl >/tmp/tl.log 2>&1 || el "TL FAILED") &
TLP=$!
while pgrep -f "ember synth" >/dev/null; do sleep 1; done
tg1 v2 "$E" >/dev/null
sweep 8 v2 "EMBER_CUDA_ARGMAX_ONE=1 $E" "$E" 2>&1 | tee -a "$OUT/log.txt"
sweep 4 q4 "EMBER_CUDA_ARGMAX_ONE=1 $E" "$E" 2>&1 | tee -a "$OUT/log.txt"
wait $TLP
tl tl_v2.log v2 | tee -a "$OUT/log.txt"
tl tl_q4.log q4 | tee -a "$OUT/log.txt"
lg done
