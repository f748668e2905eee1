#!/bin/sh
# s63-call5.sh (session 63): attention_short576tc again. Timelines of V2-Lite's batch
# 125 of tg128 with EMBER_CUDA_SHORT_TC off and on (does the kernel's span shrink?),
# then six more rotated rounds, off against on.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s63c5}"
(ptx_all /tmp/px >/dev/null) &
(sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED") &
wait
el "models and PTX ready"
for side in 0 1; do
	env EMBER_CUDA_PTX_DIR=/tmp/tl EMBER_CUDA_SHORT_TC=$side EMBER_CUDA_TIMELINE=125 timeout -s KILL 120 "$E" bench -backend cuda -p 0 -n 128 -r 1 \
		-m /tmp/v2.gguf >"$L/tl_v2_125_tc$side.log" 2>&1
	el "tc $side: $(grep 'cuda timeline of' "$L/tl_v2_125_tc$side.log")"
	grep -A8 '^kernel  *count' "$L/tl_v2_125_tc$side.log" | grep -E 'attention|mmv_idw_q8_0|add_rms'
done
export EMBER_CUDA_PTX_DIR=/tmp/px
sweep 6 v2 "$E" "EMBER_CUDA_SHORT_TC=1 $E"
el done
