# s103-call2.sh (session 103): why V2-Lite's tg128 runs spread within one machine (H200
# 724-847 in session 101, H100 610-767 in s103-call1): twelve single runs, each its own
# process with EMBER_CUDA_STATS (the device's graph time and its idle time between and
# across batches), beside nvidia-smi sampling clocks, power and throttle reasons every
# 100 ms; then the targets' tg128 -r 3 and the packed downs' 8-round A/B. Same
# preparation as s103-call1.sh (~250 s after the start).
set -u
MODELS="q4 v2" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
tgroup 0 'TestMoEQ5PBits|TestMMVIDQueueQ5P|TestKernelNamesExist' 100
wait
gsum tests 0
while pgrep -f "ember synth" >/dev/null; do sleep 1; done
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv -lms 100 >"$OUT/smi.csv" 2>&1 &
SMI=$!
for i in $(seq 12); do
	t0=$(date +%s.%N)
	EMBER_CUDA_STATS=1 timeout -s KILL 100 "$E" bench -m /tmp/v2.gguf -backend cuda -p 0 -n 128 -r 1 >"$OUT/diag$i.txt" 2>&1
	t1=$(date +%s.%N)
	lg "diag $i [$t0 - $t1]: $(grep '^| ' "$OUT/diag$i.txt" | tail -1 | cut -d'|' -f8 | tr -d ' ') | $(grep 'device (events' "$OUT/diag$i.txt" | sed 's/^ *//')"
done
kill $SMI 2>/dev/null
lg "8B tg128 -r 3 $(tg3 q4_r3 q4)"
lg "V2-Lite tg128 -r 3 $(tg3 v2_r3 v2)"
sweep 8 v2 "EMBER_CUDA_Q5P=0 $E" "$E" 2>&1 | tee -a "$OUT/log.txt"
lg done
