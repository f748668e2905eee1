# s103-call2.sh (session 103): why V2-Lite's tg128 runs spread within one machine (H200
# 724-847 in session 101, H100 610-767 in s103-call1), and whether queuing more steps
# ahead of the host helps: eight single runs, each its own process with
# EMBER_CUDA_STATS (the device's graph time and its idle time between and across
# batches), beside nvidia-smi sampling clocks, power and clock-event reasons every 100
# ms; one run with a Go CPU profile of the host; bench -ahead 1 against 2 in rotated
# rounds (V2-Lite 6, the 8B 3); then the targets' tg128 -r 3. Same preparation as
# s103-call1.sh (~270 s after the start). -ahead was a flag of commit 50639ac only,
# removed after this call found no gain.
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
for i in $(seq 8); do
	t0=$(date +%s.%N)
	EMBER_CUDA_STATS=1 timeout -s KILL 100 "$E" bench -m /tmp/v2.gguf -backend cuda -p 0 -n 128 -r 1 >"$OUT/diag$i.txt" 2>&1
	t1=$(date +%s.%N)
	lg "diag $i [$t0 - $t1]: $(grep '^| ' "$OUT/diag$i.txt" | tail -1 | cut -d'|' -f8 | tr -d ' ') | $(grep 'device (events' "$OUT/diag$i.txt" | sed 's/^ *//')"
done
kill $SMI 2>/dev/null
timeout -s KILL 100 "$E" bench -m /tmp/v2.gguf -backend cuda -p 0 -n 128 -r 5 -cpuprofile "$OUT/v2.prof" >"$OUT/prof.txt" 2>&1
lg "profiled: $(grep '^| ' "$OUT/prof.txt" | tail -1 | cut -d'|' -f8)"
for a in 1 2; do printf '#!/bin/sh\nc=$1; shift; exec %s "$c" -ahead %s "$@"\n' "$E" $a >/tmp/ea$a; chmod +x /tmp/ea$a; done
sweep 6 v2 /tmp/ea1 /tmp/ea2 2>&1 | tee -a "$OUT/log.txt"
sweep 3 q4 /tmp/ea1 /tmp/ea2 2>&1 | tee -a "$OUT/log.txt"
lg "8B tg128 -r 3 $(tg3 q4_r3 q4)"
lg "V2-Lite tg128 -r 3 $(tg3 v2_r3 v2)"
lg done
