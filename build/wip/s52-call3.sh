#!/bin/sh
# s52-call3.sh: the session's last figures on the committed build (bin/dev/ember from
# HEAD, its embedded PTX): 8B Q4_K_M and V2-Lite Q4_K_M, pp512 and tg128, medians of 3.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s52c3}"
wait
el "models written"
for m in q4 v2 q4 v2; do # the tg128 line only; pp512 was read in a second run
	el "$m: $(timeout -s KILL 90 $E bench -backend cuda -p 512 -n 128 -r 3 -m /tmp/$m.gguf 2>&1 | grep '^| ' | tail -1)"
done
el done
