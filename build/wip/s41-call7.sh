#!/bin/sh
# s41-call7.sh: where a batch-1 step goes now, kernel by kernel, on HEAD's binary: the
# last decode graph's launches (EMBER_CUDA_STATS) of DeepSeek-V2-Lite and Llama-3.1-8B
# Q4_K_M, counted by name, then tg64 with each name left out in turn (EMBER_CUDA_SKIP
# "name$": wrong results, the chain's timing). bin/dev: ember (TESTS="cuda engine").
# MODELS (default "v2 q4") and LIMIT (seconds into the call after which no more names
# are tried; default 330) as s43-call4.sh sets them.
set -u
export MODELS="${MODELS:-v2 q4}"
. build/gpu-setup.sh "${OUT:-/tmp/s41c7}"
wait
for m in $MODELS; do
	EMBER_CUDA_STATS=1 EMBER_CUDA_CHUNK=0 timeout -s KILL 100 $E bench -backend cuda -p 0 -n 16 -r 1 -m /tmp/$m.gguf 2>&1 |
		grep 'the last batch' | sed 's/.*kernels, [0-9]*: //' | tr ' ' '\n' >/tmp/$m.names
	el "$m: $(wc -l </tmp/$m.names) launches in the last batch"
	sort /tmp/$m.names | uniq -c | sort -rn | head -40
	tg() { q env "$@" $E bench -backend cuda -p 0 -n 64 -r 1 -m /tmp/$m.gguf; }
	el "$m whole: $(tg) $(tg)"
	for k in $(sort -u /tmp/$m.names); do
		[ $(($(date +%s) - T0)) -gt ${LIMIT:-330} ] && break # the call's device time
		el "$m without $k: $(tg EMBER_CUDA_SKIP="$k\$")"
	done
	el "$m whole: $(tg)"
done
