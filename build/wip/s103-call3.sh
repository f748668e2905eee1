# s103-call3.sh (session 103): whether the Go GC explains V2-Lite's idle between steps
# (s103-call2: slow runs are the device waiting for the next launch; the host's profile
# has ~15% in allocation and the GC): tg128, 6 rotated rounds, GOGC=off against the
# default; then the targets' tg128 -r 3. Same preparation as s103-call1.sh (~150 s).
set -u
MODELS="q4 v2" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
wait
sweep 6 v2 "$E" "GOGC=off $E" 2>&1 | tee -a "$OUT/log.txt"
lg "V2-Lite tg128 -r 3 $(tg3 v2_r3 v2)"
lg "8B tg128 -r 3 $(tg3 q4_r3 q4)"
lg done
