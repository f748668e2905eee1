#!/bin/sh
# s43-call4.sh: session 41's skip table (s41-call7.sh) for DeepSeek-V2-Lite again, on
# HEAD after session 42's routing change: the last decode graph's launches by name, then
# tg64 with each name left out in turn (EMBER_CUDA_SKIP "name$": wrong results, the
# chain's timing). bin/dev: HEAD's ember.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s43c4}"
wait
m=v2
EMBER_CUDA_STATS=1 EMBER_CUDA_CHUNK=0 timeout -s KILL 100 $E bench -backend cuda -p 0 -n 16 -r 1 -m /tmp/$m.gguf 2>&1 |
	grep 'the last batch' | sed 's/.*kernels, [0-9]*: //' | tr ' ' '\n' >/tmp/$m.names
el "$m: $(wc -l </tmp/$m.names) launches in the last batch"
sort /tmp/$m.names | uniq -c | sort -rn | head -40
tg() { q env "$@" $E bench -backend cuda -p 0 -n 64 -r 1 -m /tmp/$m.gguf; }
el "$m whole: $(tg) $(tg)"
for k in $(sort -u /tmp/$m.names); do
	[ $(($(date +%s) - T0)) -gt 420 ] && break # the call's device time
	el "$m without $k: $(tg EMBER_CUDA_SKIP="$k\$")"
done
el "$m whole: $(tg)"
