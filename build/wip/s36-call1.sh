#!/bin/sh
# s36-call1.sh: how long the device idles across each token's sync (EMBER_CUDA_STATS's
# event clock) in batch-1 decode, 8B Q4_K_M and V2-Lite, on HEAD's binary; tg128 medians
# beside it. bin/dev built with TESTS=" " (ember alone). ~3 minutes.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s36c1}"
wait
for m in q4 v2; do
	el "$m tg128: $(q "$E" bench -backend cuda -p 0 -n 128 -r 3 -m /tmp/$m.gguf)"
	EMBER_CUDA_STATS=1 timeout -s KILL 100 "$E" bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf >$L/stats-$m.txt 2>&1
	grep -E 'device \(events|^\| ' $L/stats-$m.txt
	el "$m tg256 (stats): $(grep '^| ' $L/stats-$m.txt | tail -1 | cut -d'|' -f8)"
done
